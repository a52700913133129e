# sd_blas.m4 - a CBLAS for the CPU paths (fp32 matrix multiplies).
#
# SD_BLAS looks for cblas_sgemm in -lopenblas, then -lblas (Debian:
# libopenblas-dev, or libblas-dev's reference CBLAS), without adding it to
# LIBS.  Nothing links it: lib/blas.c loads it with dlopen when `shakedown
# gemm` or the training workload first multiplies, so that no other
# command starts OpenBLAS's thread pool (a thread per core in every
# process, at load); SD_BLAS_SONAME names the library it loads first.
# Optional at build time: without a BLAS gemm's CPU path uses a loop of
# its own, and the training workload says to install one.
#
# Sets: BLAS_LIBS (substituted), HAVE_CBLAS, HAVE_OPENBLAS and
# SD_BLAS_SONAME (config.h), sd_blas_summary.
AC_DEFUN([SD_BLAS], [
  sd_save_LIBS=$LIBS
  BLAS_LIBS=""
  sd_blas_summary="no (apt-get install libopenblas-dev; gemm uses a loop of its own, the training workload stops)"
  AC_SEARCH_LIBS([cblas_sgemm], [openblas blas], [
    AS_CASE([$ac_cv_search_cblas_sgemm],
      ["none required"], [BLAS_LIBS=""],
      [BLAS_LIBS=$ac_cv_search_cblas_sgemm])
    AC_DEFINE([HAVE_CBLAS], [1], [a CBLAS with cblas_sgemm was found])
    AS_CASE([$BLAS_LIBS],
      [-lopenblas], [
        AC_DEFINE([HAVE_OPENBLAS], [1], [the CBLAS is OpenBLAS])
        AC_DEFINE([SD_BLAS_SONAME], ["libopenblas.so.0"],
          [the BLAS library the CPU path of shakedown gemm loads first])
        sd_blas_summary="yes (OpenBLAS, loaded by gemm and the training workload)"],
      [-lblas], [
        AC_DEFINE([SD_BLAS_SONAME], ["libblas.so.3"],
          [the BLAS library the CPU path of shakedown gemm loads first])
        sd_blas_summary="yes (libblas, loaded by gemm and the training workload)"],
      [sd_blas_summary="yes ($BLAS_LIBS)"])
  ])
  LIBS=$sd_save_LIBS
  AC_SUBST([BLAS_LIBS])
])
