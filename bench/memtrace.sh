#!/usr/bin/env bash
# memtrace.sh runs a command and writes, every half second, its elapsed
# time and memory to a file: peak resident memory (VmHWM), anonymous memory
# (RssAnon: heap and stacks) and mapped file pages (RssFile: for provgraph,
# the pages of the database that bbolt's mapping holds), all in kB. The last
# line is the command's exit status. It shows when memory peaks and of what
# kind, where bench/peakmem.sh gives only the peaks.
#
# Usage: bench/memtrace.sh OUT COMMAND [ARG...]
#
#	bench/memtrace.sh ing.trace provgraph ingest --db DB c1m.jsonl
#	awk '$1+0 == $1 {if ($3 > a) a = $3; if ($4 > f) f = $4} END {print a, f}' ing.trace
set -uo pipefail
[[ $# -ge 2 ]] || { echo "usage: bench/memtrace.sh OUT COMMAND [ARG...]" >&2; exit 2; }
out=$1
shift
: >"$out"
"$@" &
pid=$!
start=$(date +%s.%N)
while kill -0 "$pid" 2>/dev/null; do
	t=$(printf "%.1f" "$(echo "$(date +%s.%N) - $start" | bc)")
	awk -v t="$t" '/^VmHWM/ {h=$2} /^RssAnon/ {a=$2} /^RssFile/ {f=$2} END {if (h) print t, h, a, f}' "/proc/$pid/status" 2>/dev/null >>"$out"
	sleep 0.5
done
wait "$pid"
rc=$?
echo "exit $rc" >>"$out"
exit "$rc"
