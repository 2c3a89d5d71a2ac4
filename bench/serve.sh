#!/usr/bin/env bash
# serve.sh load-tests provgraph serve on loopback: a database of N generated
# citations, the first queue page and a group page, then C concurrent
# clients for D seconds while M more citations are ingested through the
# server (POST /api/ingest). Prints bench/serveload's figures.
#
# Usage: bench/serve.sh [-n N] [-m M] [-s SEED] [-c C] [-t SECONDS] [-d DB] [-b] [-i] [-x FLAGS]
#   -n  citations in the database (default 1000000; generated and ingested
#       when the database given with -d does not exist)
#   -m  citations ingested through the server during the load (default 100000)
#   -s  their seed (default 7): another seed gives citations a database
#       served before has not stored yet
#   -c  concurrent clients (default 50)
#   -t  seconds of load (default 60)
#   -d  database file (default /tmp/provgraph-serve-N.db, copied: the copy
#       is served, the original kept for reuse)
#   -i  serve DB itself, not a copy (for files too large to copy; the
#       ingest through the server writes into it)
#   -x  more flags for provgraph serve, e.g. "--mapped-mem 256MiB"
#   -b  serve --bounded: the queue in the groups' own order, read from the
#       group records (built at start when the database has none)
# It also prints how long the server took to listen and its peak resident
# memory (VmHWM) once the load and the ingest are done, with the largest
# anonymous memory and mapped file pages seen (RssAnon, RssFile, sampled
# every half second).
set -euo pipefail
die() { echo "serve.sh: $*" >&2; exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=1000000 m=100000 seed=7 c=50 t=60 db= bounded= inplace= extra=
while getopts ':n:m:s:c:t:d:x:bih' opt; do
	case $opt in
	n) n=$OPTARG ;; m) m=$OPTARG ;; s) seed=$OPTARG ;; c) c=$OPTARG ;; t) t=$OPTARG ;; d) db=$OPTARG ;; x) extra=$OPTARG ;; b) bounded=--bounded ;; i) inplace=1 ;;
	h) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option (see -h)" ;;
	esac
done
db=${db:-/tmp/provgraph-serve-$n.db}
tmp=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
(cd "$root" && go build -o "$tmp/provgraph" ./cmd/provgraph && go build -o "$tmp/gencite" ./bench/gencite && go build -o "$tmp/serveload" ./bench/serveload) || die "build failed"
if [[ ! -f $db ]]; then
	echo "generating and ingesting $n citations into $db ..." >&2
	"$tmp/gencite" -n "$n" >"$tmp/c.jsonl"
	"$tmp/provgraph" ingest --db "$db" "$tmp/c.jsonl" >&2
	rm -f "$tmp/c.jsonl"
fi
# The extra citations come from another seed, their ids prefixed so that
# they are new citations, not conflicting ones.
"$tmp/gencite" -n "$m" -seed "$seed" | sed "s/\"citation_id\":\"/\"citation_id\":\"more$seed-/; s/\"answer_id\":\"/\"answer_id\":\"more$seed-/" >"$tmp/more.jsonl"
served=$db
if [[ -z $inplace ]]; then
	served=$tmp/served.db
	cp "$db" "$served"
fi
started=$(date +%s.%N)
"$tmp/provgraph" serve --db "$served" --addr 127.0.0.1:0 --max-ingest $((1 << 34)) $bounded $extra 2>"$tmp/serve.log" &
pid=$!
# Wait for the line that names the address (the server prints it once it listens).
until grep -q ' on http://' "$tmp/serve.log" 2>/dev/null; do
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log" >&2; die "serve stopped"; }
	sleep 0.2
done
url=$(sed -n 's/.* on \(http:[^ ]*\) .*/\1/p' "$tmp/serve.log" | head -1)
printf 'listening after %.1f s\n' "$(echo "$(date +%s.%N) - $started" | bc)"
cat "$tmp/serve.log" >&2
echo "serving $n citations at $url; $c clients for ${t}s while ingesting $m more" >&2
# The server's memory, sampled until it stops.
(while kill -0 "$pid" 2>/dev/null; do
	awk '/^RssAnon/ {a=$2} /^RssFile/ {f=$2} END {if (a) print a, f}' "/proc/$pid/status" 2>/dev/null
	sleep 0.5
done) >"$tmp/mem.trace" &
order=risk
[[ -n $bounded ]] && order=
"$tmp/serveload" -url "$url" -clients "$c" -duration "${t}s" -ingest "$tmp/more.jsonl" -sort "$order"
grep -E '^Vm(HWM|RSS)' "/proc/$pid/status"
awk '{if ($1 > a) a = $1; if ($2 > f) f = $2} END {printf "largest RssAnon %d kB, largest RssFile %d kB (sampled)\n", a, f}' "$tmp/mem.trace"
