#!/bin/sh
# build_nocurl.t - the --without-curl build cannot rot unseen: this source
# tree is configured with --without-curl in a folder of its own, the command
# and its core library are built there, and test/system/upload_nocurl.t runs
# against that build: it must run (no skip) and pass.
#
# A source tree configured in place (config.status next to configure) cannot
# take a second, VPATH, configure, so then its sources are copied first,
# leaving the build outputs behind; a clean one (make distcheck's read-only
# tree, or the source of a VPATH build) is configured from where it is.
# The Gloo plugin is this build's own: it does not depend on libcurl, and
# compiling it again would triple the time.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

[ -x "$top_srcdir/configure" ] && [ -f "$top_srcdir/Makefile.in" ] ||
	skip_all "$top_srcdir has no configure and Makefile.in (run autoreconf -fi)"
command -v make >/dev/null 2>&1 || skip_all "make not found"
have_gloo ||
	skip_all "the Gloo plugin is not built: upload_nocurl.t needs a backend"

# make check's own make must not hand this one its job server or flags
unset MAKEFLAGS MFLAGS MAKELEVEL GNUMAKEFLAGS
t0=$(date +%s)

src=$top_srcdir
if [ -f "$top_srcdir/config.status" ]; then
	src=$TMPD/src
	mkdir "$src" || bail_out "cannot make $src"
	# the sources and the autotools outputs; no build outputs, above all
	# no src/shakedown or objects that make would take as up to date
	(cd "$top_srcdir" && tar -cf - --exclude=./.git \
		--exclude=./autom4te.cache --exclude=./config.status \
		--exclude=./config.log --exclude=./config.h \
		--exclude=./stamp-h1 --exclude=./libtool --exclude=./Makefile \
		--exclude=./src/shakedown --exclude=./lib/db/schema_sql.c \
		--exclude='./man/*.[15]' --exclude='./shakedown.db*' \
		--exclude='./results.db*' --exclude='./shakedown-[0-9]*' \
		--exclude=./bench/results --exclude='./test/tmp*' \
		--exclude=./notes --exclude='./.gpu-step.out' \
		--exclude='*.o' --exclude='*.lo' --exclude='*.la' \
		--exclude='*.so' --exclude=.libs --exclude=.deps \
		--exclude=.dirstamp --exclude='*.log' --exclude='*.trs' .) |
		(cd "$src" && tar -xf -) ||
		bail_out "cannot copy $top_srcdir to $src"
	diag "$top_srcdir is configured in place: built from a copy in $src"
fi

b=$TMPD/build
mkdir "$b" && cd "$b" || bail_out "cannot make $b"
run -t 300 "$src/configure" --without-curl --enable-nccl=no \
	--disable-dependency-tracking
is "$rc" 0 "configure --without-curl exits 0" || {
	diag "$err"; diag_file config.log | tail -n 30; done_testing; }
diag "configure: $secs s"
like "$out" "report upload +no \(--without-curl\)" \
	"configure says: report upload no (--without-curl)"

run -t 600 make -j2 src/shakedown
is "$rc" 0 "make src/shakedown (and lib/libshakedown.la) without libcurl" || {
	printf '%s\n' "$err" | tail -n 30 | sed 's/^/# /'; done_testing; }
diag "make: $secs s"
if command -v ldd >/dev/null 2>&1; then
	unlike "$(ldd "$b/src/shakedown" 2>&1)" "libcurl" \
		"src/shakedown does not link libcurl"
else
	skip 1 "ldd not found"
fi

# upload_nocurl.t against that build, with this build's Gloo plugin
run -t 300 env top_srcdir="$top_srcdir" top_builddir="$b" \
	SHAKEDOWN="$b/src/shakedown" \
	SHAKEDOWN_PLUGIN_DIR="$top_builddir/plugins/gloo/.libs" \
	sh "$top_srcdir/test/system/upload_nocurl.t"
tap=$out
printf '%s\n' "$tap" | sed 's/^/#   /'
is "$rc" 0 "upload_nocurl.t against the --without-curl build: exit 0"
unlike "$tap" "^1\.\.0" "upload_nocurl.t ran: no skip plan"
n=$(printf '%s\n' "$tap" | sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p')
ok '[ "${n:-0}" -gt 0 ]' "upload_nocurl.t has a plan (1..${n:-none})"
unlike "$tap" "^not ok" "upload_nocurl.t: no 'not ok'"
unlike "$tap" "# SKIP" "upload_nocurl.t: nothing skipped"
is "$(printf '%s\n' "$tap" | grep -c '^ok ')" "${n:-0}" \
	"upload_nocurl.t: every planned test passed"
diag "build_nocurl.t: $(( $(date +%s) - t0 )) s in all"
done_testing
