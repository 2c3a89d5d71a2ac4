#!/usr/bin/env bash
# run.sh measures provgraph's normalizer against Node's built-in WHATWG URL
# parser (new URL(u).href) side by side on the same file of URLs, one per
# line, on one core.
#
# Each round runs, in alternating order: bench/gonorm under the default
# policy, bench/gonorm under the lenient policy, and bench/node_url.js. Each
# run reads the file, does one untimed warm-up pass, then times PASSES
# passes over every URL. The table reports, per implementation, the median
# over rounds of each round's median seconds per pass.
#
# Usage: bench/run.sh [-r ROUNDS] [-n PASSES] [-c CPU] [-o RESULTS.jsonl] [-g] [-k COUNT] [FILE]
#
#   FILE   URLs, one per line (default internal/normalize/testdata/citation_urls_sample10k.txt)
#   -r     interleaved rounds (default 5)
#   -n     timed passes per run (default 10)
#   -c     CPU to pin every run to with taskset (default: the last CPU)
#   -o     also keep the raw per-run JSON lines in RESULTS.jsonl
#   -g     afterwards run the package benchmarks,
#          go test -bench . -benchmem -count 5 -run '^$' ./internal/normalize,
#          pinned the same way, and summarise them with benchstat if it is
#          installed (in PATH or GOPATH/bin)
#   -k     -count for -g (default 5; benchstat wants 6 or more for a
#          confidence interval)
#
# Needs go and node (20 or later). Exits non-zero on any failure.
set -euo pipefail

die() {
	echo "run.sh: $*" >&2
	exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=5
passes=10
cpu=
results=
gotest=false
count=5
while getopts ':r:n:c:o:gk:h' opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	n) passes=$OPTARG ;;
	c) cpu=$OPTARG ;;
	o) results=$OPTARG ;;
	g) gotest=true ;;
	k) count=$OPTARG ;;
	h)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
		exit 0
		;;
	:) die "-$OPTARG needs an argument (see -h)" ;;
	*) die "unknown option -$OPTARG (see -h)" ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -le 1 ]] || die "at most one FILE argument (see -h)"
file=${1:-$root/internal/normalize/testdata/citation_urls_sample10k.txt}
[[ -r $file ]] || die "cannot read $file"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer, got $rounds"
[[ $passes =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive integer, got $passes"
[[ $count =~ ^[1-9][0-9]*$ ]] || die "-k wants a positive integer, got $count"
command -v go >/dev/null || die "go is not installed"
command -v node >/dev/null || die "node is not installed"

# Pin to one core when taskset exists; otherwise at least keep the Go
# runtime to one P (Node's GC helper threads can then use another core).
pin=()
if command -v taskset >/dev/null; then
	if [[ -z $cpu ]]; then
		cpu=$(($(getconf _NPROCESSORS_ONLN) - 1))
	fi
	pin=(taskset -c "$cpu")
	pinned="CPU $cpu (taskset)"
else
	[[ -z $cpu ]] || die "-c needs taskset, which is not installed"
	pinned="not pinned (no taskset); GOMAXPROCS=1 for Go"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${results:-$tmp/results.jsonl}
: >"$out"

echo "building bench/gonorm ..." >&2
(cd "$root" && go build -o "$tmp/gonorm" ./bench/gonorm) || die "go build ./bench/gonorm failed"

runs=(go-default go-lenient node)
label() {
	case $1 in
	go-default) echo "go Normalize, default policy" ;;
	go-lenient) echo "go Normalize, lenient policy" ;;
	node) echo "node new URL(u).href" ;;
	esac
}
measure() {
	case $1 in
	go-default) GOMAXPROCS=1 "${pin[@]}" "$tmp/gonorm" -policy default "$file" "$passes" ;;
	go-lenient) GOMAXPROCS=1 "${pin[@]}" "$tmp/gonorm" -policy lenient "$file" "$passes" ;;
	node) "${pin[@]}" node "$root/bench/node_url.js" "$file" "$passes" ;;
	esac
}

echo "file: $file ($(wc -l <"$file") lines); $rounds rounds x $passes passes; $pinned" >&2
for ((r = 1; r <= rounds; r++)); do
	order=("${runs[@]}")
	if ((r % 2 == 0)); then # alternate the order to spread drift evenly
		order=(node go-lenient go-default)
	fi
	for k in "${order[@]}"; do
		res=$(measure "$k") || die "round $r: $(label "$k") failed"
		printf '{"label":"%s","round":%d,"result":%s}\n' "$(label "$k")" "$r" "$res" >>"$out"
	done
	echo "round $r/$rounds done" >&2
done

echo
echo "go $(go env GOVERSION), node $(node --version), $(uname -m), $pinned"
node "$root/bench/summarize.js" "$out" || die "summarize failed"

if $gotest; then
	echo
	echo "go test -bench . -benchmem -count $count -run '^\$' ./internal/normalize ($pinned)"
	bout=$tmp/gotest-bench.txt
	(cd "$root" && GOMAXPROCS=1 "${pin[@]}" go test -bench . -benchmem -count "$count" -run '^$' ./internal/normalize) | tee "$bout" ||
		die "go test -bench failed"
	if [[ -n $results ]]; then
		cp "$bout" "${results%.jsonl}.gotest.txt"
	fi
	benchstat=$(command -v benchstat || true)
	if [[ -z $benchstat && -x $(go env GOPATH)/bin/benchstat ]]; then
		benchstat=$(go env GOPATH)/bin/benchstat
	fi
	if [[ -n $benchstat ]]; then
		echo
		"$benchstat" "$bout" || die "benchstat failed"
	else
		echo "(benchstat not installed, skipping the summary: go install golang.org/x/perf/cmd/benchstat@latest)" >&2
	fi
fi
