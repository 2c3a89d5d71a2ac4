#!/usr/bin/env bash
# ingest.sh measures `provgraph ingest` of N synthetic citations against
# cayley's own bulk loader, `cayley load`, on the equivalent N-Quads file,
# side by side on one core, and prints a markdown table of medians.
#
# Steps: generate N citations (go run ./bench/gencite, fixed seed); build
# provgraph and bench/nqdump; write with nqdump the exact quads ingest hands
# to the store, as canonical N-Quads (the equivalent file), and a breakdown
# of them per node kind and predicate; build cayley's CLI at the version in
# go.mod from a scratch module in a temporary directory (main package:
# bench/cayleyload/main.go, which is cayley's root command plus a blank
# import of graph/kv/bbolt; go.etcd.io/bbolt is pinned to provgraph's
# version, so both sides run the same storage engine). Then, for ROUNDS
# interleaved rounds (the order alternates), each variant loads into a
# fresh store under `/usr/bin/time -v`:
#
#   provgraph     provgraph ingest --db FRESH.db citations.jsonl
#                 (50,000 quads per transaction, fsync per commit)
#   cayley        cayley load --init --db BACKEND --dbpath FRESH -i citations.nq
#                 (cayley's defaults: --batch 10000 quads per read, but its
#                 kv bulk writer commits every 20 batches: 200,000 quads per
#                 transaction; bloom filters on)
#   cayley-tx10k  the same with --batch 500, i.e. 10,000 quads per
#                 transaction
#   cayley-tx10k-nobloom  (with -b) also store.options.no_bloom, as
#                 provgraph opens cayley's kv store
#
# Reported per variant (medians over rounds): wall seconds, citations/s,
# input quads/s (quads handed to the store, repeats included: the .nq line
# count), stored quads/s, stored quads per citation, database bytes per
# citation and per stored quad, peak RSS (MB; it includes the pages of the
# memory-mapped database file that were touched, so it grows with the
# file), and each round's seconds with the load average as it ended.
# Stored quads are provgraph's "quads added" and, for cayley, the line
# count of a `cayley dump` of the first round's store (cayley's bulk
# writer stores some repeats twice: see bench/ingest-results.md).
#
# Usage: bench/ingest.sh [-n N] [-r ROUNDS] [-c CPU] [-k bbolt|bolt] [-b] [-s SEED] [-w DIR]
#
#   -n   citations (default 100000)
#   -r   interleaved rounds (default 3)
#   -c   CPU to pin every run to with taskset (default 1, or 0 on one CPU)
#   -k   cayley kv backend: bbolt (go.etcd.io/bbolt, as provgraph; default)
#        or bolt (github.com/boltdb/bolt, the stock CLI's only bolt backend)
#   -b   also run cayley-tx10k-nobloom
#   -s   gencite seed (default 1)
#   -w   keep inputs, per-run results and time logs in DIR (default: a
#        temporary directory, removed at exit)
#
# Needs go, GNU time at /usr/bin/time (apt-get install time) and network
# access or a module cache holding cayley's dependencies. Exits non-zero on
# any failure.
set -euo pipefail

die() {
	echo "ingest.sh: $*" >&2
	exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=100000
rounds=3
cpu=
backend=bbolt
nobloom=false
seed=1
keep=
while getopts ':n:r:c:k:bs:w:h' opt; do
	case $opt in
	n) n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	c) cpu=$OPTARG ;;
	k) backend=$OPTARG ;;
	b) nobloom=true ;;
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
[[ $backend == bbolt || $backend == bolt ]] || die "-k wants bbolt or bolt, got $backend"
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

echo "generating $n citations (seed $seed) ..." >&2
jsonl=$work/citations.jsonl
nq=$work/citations.nq
(cd "$root" && go run ./bench/gencite -n "$n" -seed "$seed") >"$jsonl" || die "gencite failed"
echo "building provgraph and nqdump ..." >&2
(cd "$root" && go build -o "$bin/provgraph" ./cmd/provgraph) || die "go build ./cmd/provgraph failed"
(cd "$root" && go build -o "$bin/nqdump" ./bench/nqdump) || die "go build ./bench/nqdump failed"
echo "writing the equivalent N-Quads file ..." >&2
"$bin/nqdump" -stats "$work/breakdown.md" "$jsonl" >"$nq" || die "nqdump failed"
inquads=$(wc -l <"$nq")

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
# inherited, and go install refuses a module that has any).
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

variants=(provgraph cayley cayley-tx10k)
$nobloom && variants+=(cayley-tx10k-nobloom)

# run VARIANT ROUND: one timed load into a fresh store; appends a line to
# runs.tsv: variant round seconds rss_kb db_bytes stored_quads load, where
# load is the 1-minute load average as the run ends: about 1 when the run
# had the machine to itself, more when other work competed with it.
runs=$work/runs.tsv
: >"$runs"
declare -A stored
run() {
	local v=$1 r=$2 db=$work/db-$1 log=$work/time-$1-$2.txt out=$work/out-$1-$2.txt
	rm -rf "$db"
	sync
	local cmd
	case $v in
	provgraph) cmd=("$bin/provgraph" ingest --db "$db" "$jsonl") ;;
	cayley) cmd=("$bin/cayley" load --init --db "$backend" --dbpath "$db" -i "$nq") ;;
	cayley-tx10k) cmd=("$bin/cayley" load --init --db "$backend" --dbpath "$db" --batch 500 -i "$nq") ;;
	cayley-tx10k-nobloom) cmd=("$bin/cayley" load --init -c "$work/nobloom.yml" --db "$backend" --dbpath "$db" --batch 500 -i "$nq") ;;
	esac
	"${pin[@]}" /usr/bin/time -v -o "$log" "${cmd[@]}" >"$out" 2>&1 ||
		die "round $r: $v failed: $(tail -3 "$out")"
	local secs rss bytes load
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo -)
	secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$log")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
	bytes=$(du -sb "$db" | cut -f1)
	if [[ -z ${stored[$v]:-} ]]; then
		case $v in
		provgraph) stored[$v]=$(sed -n 's/.* \([0-9]*\) quads added.*/\1/p' "$out") ;;
		*) stored[$v]=$("$bin/cayley" dump --db "$backend" --dbpath "$db" -o - 2>/dev/null | wc -l) ;;
		esac
		[[ -n ${stored[$v]} ]] || die "round $r: cannot count the quads $v stored"
	fi
	printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "$secs" "$rss" "$bytes" "${stored[$v]}" "$load" >>"$runs"
	echo "  $v: ${secs}s, $((rss / 1024)) MB peak RSS, $((bytes / 1024 / 1024)) MB on disk, load average $load" >&2
	rm -rf "$db"
}

echo "$n citations, $inquads quads in the N-Quads file; $rounds rounds; $pinned" >&2
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds" >&2
	order=("${variants[@]}")
	if ((r % 2 == 0)); then # alternate the order to spread drift evenly
		order=()
		for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[$i]}"); done
	fi
	for v in "${order[@]}"; do
		run "$v" "$r"
	done
done

# The provgraph store holds the distinct quads nqdump counted plus the
# ingest run's own 10; anything else means the .nq file is not equivalent.
distinct=$(sed -n '1s/.*, \([0-9]*\) distinct.*/\1/p' "$work/breakdown.md")
if [[ -n $distinct && $((distinct + 10)) != "${stored[provgraph]}" ]]; then
	echo "ingest.sh: warning: provgraph stored ${stored[provgraph]} quads, nqdump counted $distinct distinct + 10 run quads" >&2
fi

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -F'\t' -v v="$1" -v c="$2" '$1 == v {print $c}' "$runs" | median; }

report() {
	echo "provgraph $rev; $n citations (gencite -seed $seed), $inquads input quads; $rounds rounds, medians; $pinned;"
	echo "$(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), $(getconf _NPROCESSORS_ONLN) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); cayley $cayver, backend $backend, bbolt $boltver"
	echo
	echo "| variant | quads/tx | s | citations/s | input quads/s | stored quads/s | stored quads/citation | DB bytes/citation | DB bytes/quad | peak RSS MB | s per round (load avg) |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
	for v in "${variants[@]}"; do
		secs=$(col "$v" 3)
		rss=$(col "$v" 4)
		bytes=$(col "$v" 5)
		st=${stored[$v]}
		case $v in
		provgraph) tx=50000 ;;
		cayley) tx=200000 ;;
		*) tx=10000 ;;
		esac
		each=$(awk -F'\t' -v v="$v" '$1 == v {printf "%s%.1f (%s)", sep, $3, $7; sep = ", "}' "$runs")
		awk -v v="$v" -v tx="$tx" -v s="$secs" -v rss="$rss" -v b="$bytes" -v st="$st" -v n="$n" -v q="$inquads" -v each="$each" 'BEGIN {
			printf "| %s | %d | %.1f | %.0f | %.0f | %.0f | %.2f | %.0f | %.1f | %.0f | %s |\n", v, tx, s, n / s, q / s, st / s, st / n, b / n, b / st, rss / 1024, each
		}'
	done
	echo
	echo "Quads per citation, by subject node kind and predicate (nqdump -stats):"
	echo
	cat "$work/breakdown.md"
}
echo
report | tee "$work/report.md"
