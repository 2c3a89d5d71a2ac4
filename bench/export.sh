#!/usr/bin/env bash
# export.sh measures `provgraph export` against cayley's own `cayley dump`
# of the same database, side by side on one core, and prints a markdown
# table of medians.
#
# Steps: take the database given with -d, or generate N citations (go run
# ./bench/gencite, fixed seed) and ingest them into a new one (about 2 ms a
# citation); build provgraph; build cayley's CLI at the version in go.mod
# from a scratch module in a temporary directory, exactly as
# bench/ingest.sh does (main package: bench/cayleyload/main.go, cayley's
# root command plus a blank import of graph/kv/bbolt; go.etcd.io/bbolt
# pinned to provgraph's version, so both sides read with the same engine).
# cayley's bbolt backend opens DIR/indexes.bolt, so a copy of the database
# file is put there: a provgraph store is cayley's kv layout plus a marker
# bucket that cayley ignores. Then, for ROUNDS interleaved rounds (the order
# alternates), each variant writes the whole graph to a file under
# `/usr/bin/time -v`, pinned to one CPU:
#
#   provgraph-nt          provgraph export --format nt -o OUT.nt
#   provgraph-nq          provgraph export --format nq -o OUT.nq
#   cayley                cayley dump --db bbolt --dbpath DIR -o OUT.nq
#                         (cayley's defaults: at open it reads every quad to
#                         fill its Bloom filter)
#   cayley-nobloom        the same with store.options.no_bloom, as provgraph
#                         opens cayley's kv store
#
# provgraph's files are written atomically (temporary file, fsync, rename);
# cayley's are not synced. Reported per variant (medians over rounds): wall
# seconds, quads/s (the store's quads: provgraph's data statements; cayley's
# line count), statements written, output MB, peak RSS (MB; it includes the
# database pages bbolt's read-only mmap touched, which are page cache) and
# peak anonymous RSS (MB; the process's own memory, sampled every 0.1s).
# Both sides must write the same number of database quads.
#
# Usage: bench/export.sh [-n N] [-d DB] [-r ROUNDS] [-c CPU] [-s SEED] [-w DIR]
#
#   -n   citations to generate when no -d is given (default 100000)
#   -d   an existing provgraph database to export (it is only read)
#   -r   interleaved rounds (default 3)
#   -c   CPU to pin every run to with taskset (default 1, or 0 on one CPU)
#   -s   gencite seed (default 1)
#   -w   keep inputs, outputs and time logs in DIR (default: a temporary
#        directory, removed at exit)
#
# Needs go, GNU time at /usr/bin/time (apt-get install time) and network
# access or a module cache holding cayley's dependencies. Exits non-zero on
# any failure.
set -euo pipefail

die() {
	echo "export.sh: $*" >&2
	exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=100000
db=
rounds=3
cpu=
seed=1
keep=
while getopts ':n:d:r:c:s:w:h' opt; do
	case $opt in
	n) n=$OPTARG ;;
	d) db=$OPTARG ;;
	r) rounds=$OPTARG ;;
	c) cpu=$OPTARG ;;
	s) seed=$OPTARG ;;
	w) keep=$OPTARG ;;
	h)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
		exit 0
		;;
	:) die "-$OPTARG needs an argument (see -h)" ;;
	*) die "unknown option -$OPTARG (see -h)" ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || die "no arguments expected (see -h)"
[[ $n =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive integer, got $n"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer, got $rounds"
[[ $seed =~ ^[0-9]+$ ]] || die "-s wants a non-negative integer, got $seed"
[[ -z $db || -f $db ]] || die "-d $db: no such file"
command -v go >/dev/null || die "go is not installed"
if [[ ! -x /usr/bin/time ]]; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		echo "installing GNU time ..." >&2
		apt-get install -y -qq time >/dev/null || die "apt-get install time failed"
	fi
	[[ -x /usr/bin/time ]] || die "GNU time (/usr/bin/time) is missing: apt-get install time"
fi

pin=()
if command -v taskset >/dev/null; then
	if [[ -z $cpu ]]; then
		cpu=1
		(($(getconf _NPROCESSORS_ONLN) > 1)) || cpu=0
	fi
	pin=(taskset -c "$cpu")
	pinned="pinned to CPU $cpu (taskset)"
else
	[[ -z $cpu ]] || die "-c needs taskset, which is not installed"
	pinned="not pinned (no taskset)"
fi

if [[ -n $keep ]]; then
	mkdir -p "$keep"
	work=$(cd "$keep" && pwd)
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
bin=$work/bin
mkdir -p "$bin"

rev=$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $rev != unknown ]] && [[ -n $(cd "$root" && git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
	rev+="+uncommitted changes"
fi
modver() { (cd "$root" && go list -m -f '{{.Version}}' "$1"); }
cayver=$(modver github.com/cayleygraph/cayley) || die "cannot read cayley's version from go.mod"
boltver=$(modver go.etcd.io/bbolt) || die "cannot read bbolt's version from go.mod"

echo "building provgraph ..." >&2
(cd "$root" && go build -o "$bin/provgraph" ./cmd/provgraph) || die "go build ./cmd/provgraph failed"
if [[ -z $db ]]; then
	echo "generating $n citations (seed $seed) and ingesting them ..." >&2
	(cd "$root" && go run ./bench/gencite -n "$n" -seed "$seed") >"$work/citations.jsonl" || die "gencite failed"
	db=$work/citations.db
	rm -f "$db"
	"$bin/provgraph" ingest --db "$db" "$work/citations.jsonl" || die "ingest failed"
	what="$n citations (gencite -seed $seed)"
else
	what="database $(basename "$db")"
fi

echo "building cayley $cayver (bbolt $boltver) in a scratch module ..." >&2
src=$work/cayley-src
rm -rf "$src"
mkdir -p "$src"
sed '1{/^\/\/go:build ignore$/d}' "$root/bench/cayleyload/main.go" >"$src/main.go"
cat >"$src/go.mod" <<EOF
module cayleyload

go $(cd "$root" && go list -m -f '{{.GoVersion}}')

require github.com/cayleygraph/cayley $cayver
EOF
# cayley's own replace directives (a main module's replaces are not
# inherited).
caymod=$(cd "$root" && go mod download -json "github.com/cayleygraph/cayley@$cayver" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
[[ -r $caymod ]] || die "cannot find cayley's go.mod in the module cache"
grep '^replace ' "$caymod" >>"$src/go.mod" || true
(
	cd "$src" &&
		go mod tidy >/dev/null 2>&1 &&
		go get "go.etcd.io/bbolt@$boltver" >/dev/null 2>&1 &&
		go build -o "$bin/cayley" .
) || die "building cayley's CLI failed (in $src; run go mod tidy && go build there to see why)"
printf 'store:\n  options:\n    no_bloom: true\n' >"$work/nobloom.yml"

# cayley's bbolt backend reads DIR/indexes.bolt; give it its own copy.
caydir=$work/cayley-db
rm -rf "$caydir"
mkdir -p "$caydir"
cp "$db" "$caydir/indexes.bolt"
quads=$("$bin/provgraph" export --db "$db" --format nt -o "$work/check.nt" 2>&1 | sed -n 's/.*(\([0-9]*\) data.*/\1/p')
[[ -n $quads ]] || die "cannot count the database's quads"
rm -f "$work/check.nt"

variants=(provgraph-nt provgraph-nq cayley cayley-nobloom)
runs=$work/runs.tsv
: >"$runs"
# run VARIANT ROUND: one timed export; appends a line to runs.tsv:
# variant round seconds rss_kb out_bytes db_quads statements anon_kb
run() {
	local v=$1 r=$2 log=$work/time-$1-$2.txt out cmd dbq lines
	case $v in
	provgraph-nt) out=$work/out-$v.nt && cmd=("$bin/provgraph" export --db "$db" --format nt -o "$out") ;;
	provgraph-nq) out=$work/out-$v.nq && cmd=("$bin/provgraph" export --db "$db" --format nq -o "$out") ;;
	cayley) out=$work/out-$v.nq && cmd=("$bin/cayley" dump --db bbolt --dbpath "$caydir" -o "$out") ;;
	cayley-nobloom) out=$work/out-$v.nq && cmd=("$bin/cayley" dump -c "$work/nobloom.yml" --db bbolt --dbpath "$caydir" -o "$out") ;;
	esac
	rm -f "$out"
	sync
	"${pin[@]}" /usr/bin/time -v -o "$log" "${cmd[@]}" >"$work/stdout-$v-$r.txt" 2>&1 &
	# Peak RSS counts the pages of the database file that bbolt's mmap has
	# touched (reclaimable page cache, up to the file's size); RssAnon, the
	# process's own memory, is sampled every 0.1s from /proc.
	local tpid=$! anon=0 child a
	while kill -0 "$tpid" 2>/dev/null; do
		child=$(pgrep -P "$tpid" | head -1 || true)
		if [[ -n $child ]]; then
			a=$(awk '/^RssAnon:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
			[[ -n $a ]] && ((a > anon)) && anon=$a
		fi
		sleep 0.1
	done
	wait "$tpid" || die "round $r: $v failed: $(tail -3 "$work/stdout-$v-$r.txt")"
	local secs rss bytes
	secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$log")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
	bytes=$(stat -c %s "$out")
	lines=$(wc -l <"$out")
	case $v in
	provgraph-*) dbq=$(sed -n 's/.*(\([0-9]*\) data.*/\1/p' "$work/stdout-$v-$r.txt") ;;
	*) dbq=$lines ;;
	esac
	[[ $dbq == "$quads" ]] || die "round $r: $v wrote $dbq database quads, want $quads"
	printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "$secs" "$rss" "$bytes" "$dbq" "$lines" "$anon" >>"$runs"
	echo "  $v: ${secs}s, $((rss / 1024)) MB peak RSS, $((anon / 1024)) MB peak anonymous RSS, $((bytes / 1024 / 1024)) MB written" >&2
	rm -f "$out"
}

echo "$what, $quads quads; $rounds rounds; $pinned" >&2
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds" >&2
	order=("${variants[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[$i]}"); done
	fi
	for v in "${order[@]}"; do
		run "$v" "$r"
	done
done

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -F'\t' -v v="$1" -v c="$2" '$1 == v {print $c}' "$runs" | median; }

report() {
	echo "provgraph $rev; $what, $quads quads, $(du -m "$db" | cut -f1) MB database; $rounds rounds, medians; $pinned;"
	echo "$(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), $(getconf _NPROCESSORS_ONLN) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); cayley $cayver, backend bbolt $boltver"
	echo
	echo "| variant | s | quads/s | vs cayley | statements written | output MB | peak RSS MB | peak anonymous RSS MB |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	local base
	base=$(col cayley 3)
	for v in "${variants[@]}"; do
		awk -v v="$v" -v s="$(col "$v" 3)" -v rss="$(col "$v" 4)" -v b="$(col "$v" 5)" -v q="$quads" -v l="$(col "$v" 7)" -v anon="$(col "$v" 8)" -v base="$base" 'BEGIN {
			printf "| %s | %.2f | %.0f | %.2fx | %d | %.0f | %.0f | %.0f |\n", v, s, q / s, base / s, l, b / 1048576, rss / 1024, anon / 1024
		}'
	done
}
echo
report | tee "$work/report.md"
