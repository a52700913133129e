#!/bin/sh
# cli_options.t - the option tables of the commands: the --format names of
# run and of the database commands, and db's subcommands, are looked up in
# name tables (a misspelt name gets "did you mean"); the database commands
# parse with getopt_long: --opt VALUE and --opt=VALUE, arguments in any
# order, "--" ends the options, an unknown short or long option is one line
# and exit 2 without echoing a value, and the first bad argument is named.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
W="$top_builddir/test/system/db_writer"
DB="$TMPD/r.db"
A=aaaaaaaa-0000-4000-8000-000000000000

# bad WANT-RC REGEX ARGS...: exit WANT-RC, one line on stderr matching REGEX
bad() {
	_w=$1 _r=$2; shift 2
	run "$SHAKEDOWN" "$@"
	is "$rc" "$_w" "$* : exit $_w"
	like "$err" "$_r" "$* : says why"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$* : in one line"
}

# run --format
bad 2 "^shakedown run: --format 'xml' must be table, short, deepspeed or json$" \
	run --format xml
bad 2 "--format 'jsn' must be table, short, deepspeed or json; did you mean 'json'\?" \
	run --format jsn
bad 2 "did you mean 'deepspeed'\?" run --format=deepsped
# --raw is DeepSpeed's, for its table only
bad 2 "^shakedown run: --raw is for --format deepspeed, which is not given; add --format deepspeed or drop it$" \
	run --format json --raw

"$W" -q -u aaaaaaaa-0000-4000-8000- -T 1767225600 -b 10 "$DB"
is "$?" 0 "a run recorded"

# --format of the database commands
bad 2 "^shakedown report: unknown format 'xml'; use text, json, csv or html$" \
	report --db "$DB" --format xml
bad 2 "^shakedown report: unknown format 'jsn'; did you mean 'json'\?$" \
	report --db "$DB" --format jsn
bad 2 "unknown format 'cvs'; did you mean 'csv'\?" \
	history --db "$DB" --op all_reduce --format cvs
for f in text json csv; do
	run "$SHAKEDOWN" compare "$A" latest --db "$DB" --format "$f"
	is "$rc" 0 "compare --format $f: exit 0"
done
run "$SHAKEDOWN" report --db "$DB" --format csv
like "$out" "^test,name,dtype,size_bytes" "report --format csv: the measurements as CSV"

# db's subcommands
bad 2 "^shakedown db: unknown subcommand 'frob'; use info, migrate, check or recover$" \
	db frob --db "$DB"
bad 2 "^shakedown db: unknown subcommand 'inof'; did you mean 'info'\?$" \
	db inof --db "$DB"
bad 2 "^shakedown db: missing subcommand; use info, migrate, check or recover$" \
	db --db "$DB"
run "$SHAKEDOWN" db check --db "$DB"
is "$rc" 0 "db check: exit 0"

# getopt_long: values with = or apart, options before or after arguments
run "$SHAKEDOWN" report --format=csv "--db=$DB" latest
is "$rc" 0 "report --format=csv --db=PATH RUN: exit 0"
like "$out" "^test,name" "and --format=csv applies"
run "$SHAKEDOWN" report latest --db "$DB" --format csv
is "$rc" 0 "report RUN --db PATH --format csv: exit 0"
run "$SHAKEDOWN" history --db "$DB" --format csv --op=all_reduce --size=1K
is "$rc" 0 "history --op=... --size=...: exit 0"
is "$(printf '%s\n' "$out" | wc -l)" 2 "one header line and one row"
run "$SHAKEDOWN" report --db "$DB" -- latest
is "$rc" 0 "report --db PATH -- RUN: exit 0"
bad 2 "^shakedown report: no run '--format'; " report --db "$DB" -- --format

# errors
bad 2 "^shakedown report: unknown option '--bogus'; see 'shakedown report --help'$" \
	report --db "$DB" --bogus=s3cret
unlike "$err" "s3cret" "the value of an unknown option is not echoed"
bad 2 "^shakedown report: unknown option '-x'; see 'shakedown report --help'$" \
	report --db "$DB" -x
bad 2 "^shakedown history: unknown option '--tolerance'" \
	history --db "$DB" --op all_reduce --tolerance 5
bad 2 "^shakedown compare: option '--tolerance' needs a value$" \
	compare "$A" latest --db "$DB" --tolerance
bad 2 "^shakedown report: unexpected argument 'b'; see 'shakedown report --help'$" \
	report a b --bogus --db "$DB"
bad 2 "^shakedown db: unexpected argument 'extra'" db info extra --db "$DB"

# --help wins wherever it stands, and goes to stdout
for c in report history compare db; do
	run "$SHAKEDOWN" $c --db "$DB" --help
	is "$rc" 0 "$c --db PATH --help: exit 0"
	like "$out" "^usage: shakedown $c" "$c --help: usage on stdout"
	is "$err" "" "$c --help: nothing on stderr"
done

# what getopt_long would let through: abbreviations (a secret typed after
# "--token" was stored as the token file's name, in the record and the
# report) and a value that is an option
cd "$TMPD" || bail_out "cannot cd to $TMPD"
bad 2 "^shakedown run: '--token' is short for '--token-file'; write options out in full$" \
	run --local 1 --upload http://127.0.0.1:1/ --token S3CRET-VALUE --db "$TMPD/t.db"
unlike "$err" "S3CRET" "the secret is not echoed"
ok '[ ! -e "$TMPD/t.db" ]' "and nothing is recorded"
bad 2 "^shakedown run: --db needs a value, not the option '--no-progress' \\(for a value that starts with --, write --db=VALUE\\)$" \
	run --local 1 --db --no-progress
ok '[ ! -e "$TMPD/--no-progress" ]' "no database named --no-progress is made"
bad 2 "^shakedown run: --token-file is for --upload, which is not given; add --upload URL or drop it$" \
	run --local 1 --token-file "$TMPD/token"
bad 2 "^shakedown run: --cacert is for --upload, which is not given" \
	run --local 1 --cacert "$TMPD/ca.pem"
bad 2 "^shakedown report: '--form' is short for '--format'; write options out in full$" \
	report --db "$DB" --form json
bad 2 "^shakedown: upload: --token: a token is never taken on the command line" \
	upload --db "$DB" --url http://127.0.0.1:1/ --token S3CRET-VALUE
bad 2 "^shakedown plan: '--busb' is short for '--busbw'" plan expand --busb 10 x.yaml
bad 2 "^shakedown baseline: --db needs a value, not the option '--format'" \
	baseline list --db --format json
run "$SHAKEDOWN" run --local 1 --no-progress --db="$TMPD/--odd.db" --op all_reduce -e 4K
is "$rc" 0 "a value that starts with -- is still possible as --db=VALUE"

# --local beyond what one host's TCP ports hold for Gloo's full mesh is
# refused at once with the limit (it failed after minutes with "bind:
# Address already in use" from every rank)
for n in 256 1024; do
	bad 2 "^shakedown run: --local $n: Gloo's full mesh on one host needs about [0-9]+ local TCP ports .*; at most [0-9]+ ranks here, or widen the range" \
		run --local $n --db none
done
bad 2 "^shakedown topo: --local 1024: Gloo's full mesh" topo --local 1024

# the options every command that starts ranks shares (one row and one check
# each, src/job_options.c): the same words from run, gemm, train and topo;
# --db only where the command records a run, so topo refuses it
for c in run gemm train topo; do
	bad 2 "^shakedown $c: --local '0' must be a number of ranks from 1 to 1024$" \
		$c --local 0
	bad 2 "^shakedown $c: --timeout 'soon' must be a positive number of seconds$" \
		$c --timeout soon
	bad 2 "^shakedown $c: --timeout '-1' must be a positive number of seconds$" \
		$c -T -1
	bad 2 "^shakedown $c: option '--backend' needs a value$" $c --backend
	bad 2 "^shakedown $c: '--ifa' is short for '--iface'; write options out in full$" \
		$c --ifa lo
	help=$("$SHAKEDOWN" help $c)
	for o in --local --backend --iface --timeout; do
		case "$help" in
		*"$o "*) pass "$c --help names $o" ;;
		*) fail "$c --help names $o" ;;
		esac
	done
done
for c in run gemm train; do
	case "$("$SHAKEDOWN" help $c)" in
	*"--db "*) pass "$c --help names --db" ;;
	*) fail "$c --help names --db" ;;
	esac
done
bad 2 "^shakedown topo: unknown option '--db'; see 'shakedown help topo'$" \
	topo --db x.db

done_testing
