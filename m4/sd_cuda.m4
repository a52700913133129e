# sd_cuda.m4 - CUDA toolkit and NCCL for the NCCL backend plugin.
# Owned by the NCCL plugin work (issue 5).  Until then: disabled.
AC_DEFUN([SD_CHECK_CUDA], [
  sd_cuda_summary="no (not written yet)"
  AM_CONDITIONAL([HAVE_NCCL], [false])
])
