# sd_cuda.m4 - the CUDA toolkit and NCCL, for the NCCL backend plugin
# (plugins/nccl).
#
# SD_CHECK_CUDA finds the toolkit from --with-cuda=DIR, else from nvcc on
# PATH, else /usr/local/cuda; NCCL from --with-nccl=DIR, else the toolkit's
# directory, else the system paths.  The plugin is built when nvcc, the CUDA
# runtime and NCCL (2.18 or newer: ncclCommSplit and non-blocking init) are
# all found.  --enable-nccl=yes turns a missing part into a configure error
# (CI uses it on machines that have CUDA); --disable-nccl skips the search.
#
# Sets: sd_cuda_summary (the reason when not built), AM_CONDITIONAL
# HAVE_NCCL and HAVE_CUBLAS (the plugin's gemm slot), HAVE_NCCL_FP8 and
# HAVE_CUBLAS (config.h), and substitutes NVCC, NVCC_GENCODE,
# CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS, NCCL_CPPFLAGS, NCCL_LDFLAGS,
# NCCL_LIBS, CUBLAS_LIBS.

# _SD_CUDA_LIBDIRS(PREFIX): the library flags (-L and libtool's -R, so the
# plugin finds its libraries without LD_LIBRARY_PATH) for each of PREFIX's
# lib64 and lib folders that exists.
AC_DEFUN([_SD_CUDA_LIBDIRS], [
  sd_libdirs=""
  for sd_d in "$1/lib64" "$1/lib" "$1/lib/x86_64-linux-gnu" "$1/lib/aarch64-linux-gnu"; do
    AS_IF([test -d "$sd_d"], [sd_libdirs="$sd_libdirs -L$sd_d -R$sd_d"])
  done
])

AC_DEFUN([SD_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR],
      [CUDA toolkit for the NCCL plugin (default: from nvcc on PATH, else /usr/local/cuda)])],
    [], [with_cuda=check])
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl=DIR],
      [NCCL for the NCCL plugin (default: the CUDA directory, else the system)])],
    [], [with_nccl=check])
  AC_ARG_ENABLE([nccl],
    [AS_HELP_STRING([--enable-nccl@<:@=yes|no|auto@:>@],
      [build the NCCL (GPU) backend plugin; yes: stop when CUDA or NCCL is missing (default: auto)])],
    [], [enable_nccl=auto])
  AC_ARG_VAR([NVCC], [CUDA compiler (default: DIR/bin/nvcc of the toolkit found)])
  AC_ARG_VAR([NVCC_GENCODE],
    [nvcc code generation flags (default: sm_80, sm_90 and sm_100 code plus compute_100 PTX)])
  AS_IF([test "x$NVCC_GENCODE" = x],
    [NVCC_GENCODE="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 -gencode arch=compute_100,code=compute_100"])

  sd_have_nccl=no
  sd_cuda_why=""
  sd_cuda_dir=""
  AS_IF([test "x$enable_nccl" = xno || test "x$with_cuda" = xno || test "x$with_nccl" = xno],
    [sd_cuda_why="disabled by --disable-nccl, --without-cuda or --without-nccl"])

  # the toolkit
  AS_IF([test "x$sd_cuda_why" = x], [
    AC_MSG_CHECKING([for the CUDA toolkit])
    AS_IF([test "x$with_cuda" != xcheck && test "x$with_cuda" != xyes],
      [sd_cuda_dir=$with_cuda],
      [test "x$NVCC" != x && test -x "$NVCC"],
      [sd_cuda_dir=`dirname "$NVCC"`; sd_cuda_dir=`dirname "$sd_cuda_dir"`],
      [sd_nvcc_path=`command -v nvcc 2>/dev/null`; test "x$sd_nvcc_path" != x],
      [sd_cuda_dir=`dirname "$sd_nvcc_path"`; sd_cuda_dir=`dirname "$sd_cuda_dir"`],
      [test -d /usr/local/cuda], [sd_cuda_dir=/usr/local/cuda])
    AS_IF([test "x$sd_cuda_dir" = x],
      [sd_cuda_why="CUDA toolkit not found: no nvcc on PATH and no /usr/local/cuda; pass --with-cuda=DIR"])
    AC_MSG_RESULT([${sd_cuda_dir:-no}])
  ])
  AS_IF([test "x$sd_cuda_why" = x], [
    AS_IF([test "x$NVCC" = x], [NVCC="$sd_cuda_dir/bin/nvcc"])
    AC_MSG_CHECKING([whether $NVCC compiles for $NVCC_GENCODE])
    cat > conftest.cu <<'SD_EOF'
__global__ void k(int *p) { *p = (int)threadIdx.x; }
int main(void) { k<<<1, 1>>>(0); return 0; }
SD_EOF
    AS_IF([$NVCC $NVCC_GENCODE -c -o conftest.$OBJEXT conftest.cu >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       sd_cuda_why="$NVCC does not work (see config.log); pass --with-cuda=DIR or NVCC=..."])
    rm -f conftest.cu conftest.$OBJEXT
  ])
  AS_IF([test "x$sd_cuda_why" = x], [
    CUDA_CPPFLAGS="-I$sd_cuda_dir/include"
    _SD_CUDA_LIBDIRS([$sd_cuda_dir])
    CUDA_LDFLAGS=$sd_libdirs
    CUDA_LIBS="-lcudart"
    sd_save_CPPFLAGS=$CPPFLAGS; sd_save_LIBS=$LIBS; sd_save_LDFLAGS=$LDFLAGS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
    LDFLAGS="$LDFLAGS `echo $CUDA_LDFLAGS | sed 's/-R[[^ ]]*//g'`"
    AC_CHECK_HEADER([cuda_runtime_api.h], [
      AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [],
        [sd_cuda_why="libcudart not found in $sd_cuda_dir; pass --with-cuda=DIR"])],
      [sd_cuda_why="cuda_runtime_api.h not found in $sd_cuda_dir/include; pass --with-cuda=DIR"])
    CPPFLAGS=$sd_save_CPPFLAGS; LIBS=$sd_save_LIBS; LDFLAGS=$sd_save_LDFLAGS
  ])

  # NCCL
  AS_IF([test "x$sd_cuda_why" = x], [
    AS_IF([test "x$with_nccl" != xcheck && test "x$with_nccl" != xyes],
      [sd_nccl_dirs=$with_nccl], [sd_nccl_dirs="$sd_cuda_dir /usr"])
    sd_nccl_found=no
    for sd_nd in $sd_nccl_dirs; do
      AS_IF([test -f "$sd_nd/include/nccl.h"], [sd_nccl_found=$sd_nd; break])
    done
    AS_IF([test "x$sd_nccl_found" = xno],
      [sd_cuda_why="NCCL not found (no include/nccl.h in $sd_nccl_dirs); pass --with-nccl=DIR"])
  ])
  AS_IF([test "x$sd_cuda_why" = x], [
    NCCL_CPPFLAGS="-I$sd_nccl_found/include"
    AS_IF([test "x$sd_nccl_found" = "x$sd_cuda_dir" || test "x$sd_nccl_found" = x/usr],
      [NCCL_LDFLAGS=""],
      [_SD_CUDA_LIBDIRS([$sd_nccl_found])
       NCCL_LDFLAGS=$sd_libdirs])
    NCCL_LIBS="-lnccl"
    sd_save_CPPFLAGS=$CPPFLAGS; sd_save_LIBS=$LIBS; sd_save_LDFLAGS=$LDFLAGS
    CPPFLAGS="$CPPFLAGS $NCCL_CPPFLAGS $CUDA_CPPFLAGS"
    LDFLAGS="$LDFLAGS `echo $NCCL_LDFLAGS $CUDA_LDFLAGS | sed 's/-R[[^ ]]*//g'`"
    LIBS="-lnccl -lcudart $LIBS"
    AC_MSG_CHECKING([for NCCL 2.18 or newer (ncclCommSplit, non-blocking init)])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>
#if NCCL_VERSION_CODE < 21800
#error NCCL too old
#endif
]], [[ncclConfig_t c = NCCL_CONFIG_INITIALIZER; ncclComm_t a = 0, b = 0;
      c.blocking = 0; (void)ncclCommSplit(a, 0, 0, &b, &c);
      (void)ncclCommInitRankConfig(&b, 1, *(ncclUniqueId *)0, 0, &c);]])],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       sd_cuda_why="NCCL in $sd_nccl_found is missing or older than 2.18 (see config.log); pass --with-nccl=DIR"])
    AS_IF([test "x$sd_cuda_why" = x], [
      AC_MSG_CHECKING([for NCCL fp8 types])
      AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>]],
        [[ncclDataType_t a = ncclFloat8e4m3, b = ncclFloat8e5m2; (void)a; (void)b;]])],
        [AC_MSG_RESULT([yes])
         AC_DEFINE([HAVE_NCCL_FP8], [1], [NCCL has ncclFloat8e4m3 and ncclFloat8e5m2])],
        [AC_MSG_RESULT([no])])
      sd_nccl_version=`sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) *\(@<:@0-9@:>@*\).*/\2/p' "$sd_nccl_found/include/nccl.h" | tr '\n' . | sed 's/\.$//'`
    ])
    CPPFLAGS=$sd_save_CPPFLAGS; LIBS=$sd_save_LIBS; LDFLAGS=$sd_save_LDFLAGS
  ])

  # cuBLAS and cuBLASLt, for the plugin's gemm slot (shakedown gemm):
  # without them the plugin is built without the slot
  sd_have_cublas=no
  CUBLAS_LIBS=""
  AS_IF([test "x$sd_cuda_why" = x], [
    sd_save_CPPFLAGS=$CPPFLAGS; sd_save_LIBS=$LIBS; sd_save_LDFLAGS=$LDFLAGS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
    LDFLAGS="$LDFLAGS `echo $CUDA_LDFLAGS | sed 's/-R[[^ ]]*//g'`"
    LIBS="-lcublasLt -lcublas -lcudart $LIBS"
    AC_MSG_CHECKING([for cuBLAS and cuBLASLt (cublasGemmEx, cublasLtMatmul)])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cublas_v2.h>
#include <cublasLt.h>
]], [[cublasHandle_t h = 0; cublasLtHandle_t l = 0;
      (void)cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, 1, 0, 0,
        CUDA_R_16BF, 1, 0, CUDA_R_16BF, 1, 0, 0, CUDA_R_16BF, 1,
        CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
      (void)cublasLtMatmul(l, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
      (void)CUDA_R_8F_E4M3;]])],
      [AC_MSG_RESULT([yes])
       sd_have_cublas=yes
       CUBLAS_LIBS="-lcublasLt -lcublas"
       AC_DEFINE([HAVE_CUBLAS], [1], [the NCCL plugin has the gemm slot (cuBLAS, cuBLASLt)])],
      [AC_MSG_RESULT([no])])
    CPPFLAGS=$sd_save_CPPFLAGS; LIBS=$sd_save_LIBS; LDFLAGS=$sd_save_LDFLAGS
  ])

  AS_IF([test "x$sd_cuda_why" = x], [
    sd_have_nccl=yes
    sd_cuda_version=`$NVCC --version 2>/dev/null | sed -n 's/.*release \(@<:@0-9.@:>@*\),.*/\1/p'`
    sd_cublas_note="gemm through cuBLAS"
    AS_IF([test "x$sd_have_cublas" != xyes], [sd_cublas_note="no gemm slot: cuBLAS not found"])
    sd_gencode_names=`$SHELL "$srcdir/m4/gencode_summary.sh" "$NVCC_GENCODE"`
    sd_cuda_summary="yes (plugins/nccl: CUDA $sd_cuda_version in $sd_cuda_dir, NCCL $sd_nccl_version, $sd_gencode_names, $sd_cublas_note)"
    AC_DEFINE([HAVE_NCCL], [1], [the NCCL backend plugin is built])
  ], [
    sd_cuda_summary="no ($sd_cuda_why)"
    AS_IF([test "x$enable_nccl" = xyes],
      [AC_MSG_ERROR([--enable-nccl=yes, but the NCCL plugin cannot be built: $sd_cuda_why])])
  ])
  AC_SUBST([NVCC])
  AC_SUBST([NVCC_GENCODE])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([NCCL_CPPFLAGS])
  AC_SUBST([NCCL_LDFLAGS])
  AC_SUBST([NCCL_LIBS])
  AC_SUBST([CUBLAS_LIBS])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$sd_have_nccl" = xyes])
  AM_CONDITIONAL([HAVE_CUBLAS], [test "x$sd_have_nccl" = xyes && test "x$sd_have_cublas" = xyes])
])
