#!/bin/sh
# gencode_summary.sh - the GPU code that nvcc's flags build, for
# configure's summary: "sm_80 sm_90 sm_100 + compute_100 PTX" for
# "-gencode arch=compute_80,code=sm_80 ... -gencode
# arch=compute_100,code=compute_100".  Every code= entry is named: sm_NN
# is machine code, compute_NN is PTX.  Without any code=, -arch=sm_NN is
# nvcc's shorthand for sm_NN code plus compute_NN PTX.  Used by
# m4/sd_cuda.m4; tested by test/system/configure_summary.t.
echo "$*" | tr ' ' '\n' |
	sed -n 's/.*code=//p; s/^-\{1,2\}\(arch\|gpu-architecture\)=/ARCH:/p' |
	tr -d '[]' | tr ',' '\n' | awk '
	function add(c) {
		if (seen[c]++) return
		if (c ~ /^sm_/) sm = sm (sm ? " " : "") c
		else if (c ~ /^compute_/) ptx = ptx (ptx ? " " : "") c
	}
	/^ARCH:/ { arch[na++] = substr($0, 6); next }
	{ add($0); coded = 1 }
	END {
		for (i = 0; !coded && i < na; i++) {
			add(arch[i])
			if (arch[i] ~ /^sm_/) add("compute_" substr(arch[i], 4))
		}
		s = sm
		if (ptx) s = s (s ? " + " : "") ptx " PTX"
		print s ? s : "nvcc default"
	}'
