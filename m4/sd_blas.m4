# sd_blas.m4 - the CBLAS the training workload's CPU path multiplies with
# (lib/train/gpt.c): OpenBLAS first, then any libblas with the CBLAS
# interface.  Required: without one configure stops naming the Debian
# package to install.  Sets BLAS_LIBS (added to the library by
# lib/train/train.am, not to every program's LIBS) and defines
# HAVE_OPENBLAS when the library is OpenBLAS, whose thread count the model
# sets to one (openblas_set_num_threads).

AC_DEFUN([SD_CHECK_BLAS], [
  AC_CHECK_HEADER([cblas.h], [],
    [AC_MSG_ERROR([cblas.h not found; install it with: apt-get install libopenblas-dev])])
  sd_save_LIBS=$LIBS
  AC_SEARCH_LIBS([cblas_sgemm], [openblas blas], [],
    [AC_MSG_ERROR([no CBLAS library with cblas_sgemm found; install it with: apt-get install libopenblas-dev])])
  AS_CASE([$ac_cv_search_cblas_sgemm],
    ["none required"], [BLAS_LIBS=],
    [BLAS_LIBS=$ac_cv_search_cblas_sgemm])
  AC_CHECK_FUNC([openblas_set_num_threads], [sd_have_openblas=yes],
    [sd_have_openblas=no])
  LIBS=$sd_save_LIBS
  AS_IF([test "x$sd_have_openblas" = xyes], [
    AC_DEFINE([HAVE_OPENBLAS], [1],
      [the CBLAS is OpenBLAS (openblas_set_num_threads)])
    sd_blas_summary="OpenBLAS ($BLAS_LIBS, one thread per rank)"],
    [sd_blas_summary="CBLAS ($BLAS_LIBS; apt-get install libopenblas-dev for OpenBLAS)"])
  AC_SUBST([BLAS_LIBS])
])
