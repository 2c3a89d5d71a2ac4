#!/usr/bin/env bash
# query.sh times the read-only queries on a generated database:
# provgraph groups over every citation, stats, and lineage of one citation,
# each under /usr/bin/time -v for wall time and peak memory.
#
# Usage: bench/query.sh [-n N] [-r ROUNDS] [-d DB]
#   -n  citations to generate and ingest (default 100000); skipped when the
#       database given with -d exists already
#   -r  rounds (default 3); medians are reported
#   -d  database file (default /tmp/provgraph-query-N.db, kept for reuse)
set -euo pipefail
die() { echo "query.sh: $*" >&2; exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=100000 rounds=3 db=
while getopts ':n:r:d:h' opt; do
	case $opt in
	n) n=$OPTARG ;; r) rounds=$OPTARG ;; d) db=$OPTARG ;;
	h) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option (see -h)" ;;
	esac
done
db=${db:-/tmp/provgraph-query-$n.db}
[[ -x /usr/bin/time ]] || { [[ $(id -u) = 0 ]] && apt-get install -y -qq time >/dev/null; } || die "needs /usr/bin/time (Debian package time)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/provgraph" ./cmd/provgraph && go build -o "$tmp/gencite" ./bench/gencite) || die "build failed"
if [[ ! -f $db ]]; then
	echo "generating and ingesting $n citations into $db ..." >&2
	"$tmp/gencite" -n "$n" >"$tmp/c.jsonl"
	"$tmp/provgraph" ingest --db "$db" "$tmp/c.jsonl" >&2
fi
measure() { # label, command...
	local label=$1; shift
	for ((r = 1; r <= rounds; r++)); do
		/usr/bin/time -f "%e %M" -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; die "$label failed"; }
		read -r secs kb <"$tmp/t"
		echo "$label $secs $kb"
	done
}
{
	measure groups "$tmp/provgraph" groups --db "$db" --format json --min-size 1
	measure stats "$tmp/provgraph" stats --db "$db" --format json
	id=$("$tmp/provgraph" groups --db "$db" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["groups"][0]["members"][0]["citation_id"])')
	measure "lineage" "$tmp/provgraph" lineage --db "$db" --format json "$id"
} >"$tmp/results"
echo "database: $db ($(du -h "$db" | cut -f1)), $(go env GOVERSION), $(nproc) cores"
echo "| query | median seconds | median peak RSS MB |"
echo "| --- | ---: | ---: |"
for q in groups stats lineage; do
	awk -v q="$q" '$1 == q {print $2, $3}' "$tmp/results" | sort -n | awk -v q="$q" '
		{ s[NR] = $1; m[NR] = $2 } END { i = int((NR + 1) / 2); printf "| %s | %.2f | %.0f |\n", q, s[i], m[i] / 1024 }'
done
