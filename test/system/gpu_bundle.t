#!/bin/sh
# gpu_bundle.t - the GPU kit's bundle (test/gpu/bundle.sh) is what a bare GPU
# machine can run: made from this build (without nccl-tests, which takes
# minutes to compile), every library of every carried ELF file resolves
# inside it or to the system set (test/gpu/closure.sh), also once unpacked
# elsewhere; a library taken out is named; the unpacked shakedown finds its
# own plugins, plans and references relative to its executable; and, where
# this machine can make a bare Debian root (root, debootstrap, Debian's
# archive), the rehearsal (test/gpu/rehearse.sh) runs the device call's
# script there with no GPU and every step passes.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

[ -f "$top_builddir/plugins/nccl/.libs/backend_nccl.so" ] ||
	skip_all "this build has no NCCL plugin (no CUDA or NCCL here): the bundle carries it"
[ -f "$top_builddir/plugins/gloo/.libs/backend_gloo.so" ] ||
	skip_all "this build has no Gloo plugin: the bundle's checks need a CPU backend"
for t in patchelf objdump strip ldd sqlite3 make; do
	command -v "$t" >/dev/null 2>&1 ||
		skip_all "$t not found (quickstart.sh installs patchelf, binutils, sqlite3)"
done
unset MAKEFLAGS MFLAGS MAKELEVEL GNUMAKEFLAGS

b=$TMPD/bundle
run -t 900 sh "$top_srcdir/test/gpu/bundle.sh" --build "$top_builddir" \
	--out "$b" --work "$TMPD/work" --no-nccl-tests
is "$rc" 0 "bundle.sh --no-nccl-tests exits 0" || {
	diag "$out" "$err"; done_testing; }
diag "bundle.sh: $secs s"
printf '%s\n' "$out" | grep -E '^(bundle|closure):' | sed 's/^/# /'
like "$out" "closure: [0-9]+ ELF files .*: every library resolves inside the bundle or to the system set" \
	"the closure holds where it was made"
tgz=$b/shakedown-gpu.tar.gz
ok '[ -f "$tgz" ] && [ "$(ls "$b")" = shakedown-gpu.tar.gz ]' \
	"--out holds the tarball alone (what the device call carries)"
kib=$(du -k "$tgz" | cut -f1)
ok '[ "$kib" -lt 49152 ]' "the bundle is under 48 MiB ($kib KiB)"

# unpacked elsewhere, as the device does
x=$TMPD/x
mkdir -p "$x" && tar -xzf "$tgz" -C "$x" || bail_out "cannot unpack $tgz"
r=$x/shakedown-gpu
m=$r/MANIFEST
like "$(cat "$m")" "newest glibc symbol version needed: GLIBC_[0-9.]+" \
	"the MANIFEST names the newest glibc the bundle needs"
for l in libsqlite3.so.0 libyaml-0.so.2 libjansson.so.4 libgloo.so.0 libopenblas.so.0; do
	ok '[ -f "$r/lib/deps/$l" ] && grep -q "^  $l " "$m"' \
		"$l is carried and listed (ldd's needs and the dlopen'ed BLAS)"
done
for f in bin/shakedown lib/shakedown/backend_nccl.so lib/shakedown/backend_gloo.so \
	kit/gpu_libs kit/nccl_links kit/sqlite3 kit/run.sh kit/check.sh run.sh \
	share/shakedown/plans/acceptance.yaml share/shakedown/plans/reference/gpt-test-cpu.ref; do
	ok '[ -f "$r/$f" ]' "the bundle has $f"
done
run -t 120 sh "$top_srcdir/test/gpu/closure.sh" "$r"
is "$rc" 0 "the closure holds unpacked in another folder"

# a library taken out is named, not found elsewhere unseen
cp -R "$r" "$TMPD/broken"
rm -f "$TMPD/broken/lib/deps/libyaml-0.so.2"
run -t 120 sh "$top_srcdir/test/gpu/closure.sh" "$TMPD/broken"
is "$rc" 1 "a bundle without its libyaml fails the closure (exit 1)"
like "$out" "bin/shakedown: libyaml-0\.so\.2 (=> not found|comes from .*outside the bundle)" \
	"the closure names the file and the library it lacks"

# the unpacked shakedown finds its own plugins, plans and references:
# nothing points it there
run -t 60 env -u SHAKEDOWN_PLUGIN_DIR -u SHAKEDOWN_PLAN_DIR "$r/bin/shakedown" \
	plan check acceptance --ranks 16
is "$rc" 0 "a shipped plan by name, found relative to the executable"
run -t 120 env -u SHAKEDOWN_PLUGIN_DIR "$r/bin/shakedown" train --local 2 \
	--backend gloo --config test --steps 100 --db none --no-progress
is "$rc" 0 "train on the bundle's Gloo plugin and OpenBLAS: exit 0"
like "$out" "reference +gpt-test-cpu \(shipped, $r/bin/\.\./share/shakedown/plans/reference/gpt-test-cpu\.ref\)" \
	"the shipped reference is the bundle's own"
like "$out" "loss check +100 steps compared: .*: passed" "and the loss matches it"
rm -f "$TMPD/broken/lib/shakedown/backend_gloo.so"
run -t 60 env -u SHAKEDOWN_PLUGIN_DIR "$TMPD/broken/bin/shakedown" run --local 1 \
	--backend gloo --db none --op all_reduce -b 8 -e 8
is "$rc" 3 "without its Gloo plugin the moved shakedown stops (exit 3)"
like "$err" "looked for backend_gloo\.so in $TMPD/broken/bin/\.\./lib/shakedown" \
	"and says it looked in its own lib/shakedown first"

# the rehearsal on a bare root: where this machine can make one
if [ "$(id -u)" != 0 ]; then
	skip 3 "the rehearsal needs root (debootstrap, mount, chroot)"
else
	run -t 900 env SD_REHEARSE_SKIP_OK=1 sh "$top_srcdir/test/gpu/rehearse.sh" \
		--bundle "$tgz" --out "$TMPD/rehearsal"
	if [ "$rc" = 77 ]; then
		skip 3 "$(printf '%s\n' "$err" | tail -n 1)"
	else
		printf '%s\n' "$out" | grep -E '^(rehearse|device|run):' | sed 's/^/# /'
		is "$rc" 0 "the rehearsal on a bare Debian root passes (exit 0)" ||
			diag "$(tail -n 40 "$TMPD/rehearsal/device.log" 2>/dev/null)"
		s=$TMPD/rehearsal/summary.md
		like "$(cat "$s" 2>/dev/null)" "GPU kit summary: 14 steps, 14 ok, 0 not ok, 0 not run" \
			"its summary: 14 steps, every one ok"
		like "$out" "run: loaded: nccl +[0-9.]+ /opt/torch/\.venv/lib/python3\.12/site-packages/nvidia/nccl/lib/libnccl\.so\.2" \
			"NCCL was found where the wheel keeps it"
	fi
fi
done_testing
