#!/bin/sh
# configure_summary.t - configure's summary names every GPU architecture
# that nvcc's -gencode flags build (m4/gencode_summary.sh), the default
# flags of m4/sd_cuda.m4 included: it once said "sm_80 sm_90 + PTX" while
# sm_100 was built too.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

S=$top_srcdir/m4/gencode_summary.sh
M4=$top_srcdir/m4/sd_cuda.m4
names() { sh "$S" "$1"; }

# the default, read from sd_cuda.m4 itself
default=$(sed -n 's/.*\[NVCC_GENCODE="\(.*\)"\])$/\1/p' "$M4")
isnt "$default" "" "the default NVCC_GENCODE is found in sd_cuda.m4"
is "$(names "$default")" "sm_80 sm_90 sm_100 + compute_100 PTX" \
	"the default: every sm_ code and the PTX named"
for c in $(printf '%s\n' "$default" | grep -o 'code=[a-z_0-9]*' |
	sed 's/code=//'); do
	like "$(names "$default")" "(^| )$c( |$)" "the default's $c is named"
done
# table: flags, what the summary says
while IFS='|' read -r flags want; do
	is "$(names "$flags")" "$want" "'$flags'"
done <<'ROWS'
-gencode arch=compute_90,code=sm_90|sm_90
-gencode arch=compute_90,code=[sm_90,compute_90]|sm_90 + compute_90 PTX
-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=sm_86|sm_80 sm_86
-arch=sm_90|sm_90 + compute_90 PTX
--gpu-architecture=sm_80|sm_80 + compute_80 PTX
-arch=compute_90 -code=sm_90|sm_90
|nvcc default
ROWS
unlike "$(grep sd_cuda_summary= "$M4")" "sm_[0-9]" \
	"the summary names no architecture of its own"
done_testing
