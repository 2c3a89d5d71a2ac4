#!/usr/bin/env bash
# growview.sh measures what a grouping view costs an ingest once the
# database is large: two provgraph binaries (say, a build whose views are
# B-trees and one whose views are sorted runs) each ingest the first FIRST
# citations of an input into a new database, then the next MORE into that
# database, one binary after the other, under /usr/bin/time and
# bench/memtrace.sh. The second ingest is where a view's writes land among
# pages that no longer stay mapped.
#
# Usage: bench/growview.sh OUTDIR INPUT.jsonl FIRST MORE BINARY...
#
#	go run ./bench/gencite -n 2500000 > c.jsonl
#	git stash; go build -o /tmp/pg-old ./cmd/provgraph; git stash pop
#	go build -o /tmp/pg-new ./cmd/provgraph
#	bench/growview.sh /tmp/grow c.jsonl 1000000 1500000 /tmp/pg-old /tmp/pg-new
#
# Prints, per binary and step: wall, user and system CPU seconds, peak RSS
# (kB), the most anonymous memory and mapped file pages memtrace saw
# (kB), quads added (from ingest's summary) and the file's size. OUTDIR
# keeps each run's databases, traces and standard error; it is not
# removed.
set -euo pipefail
[[ $# -ge 5 ]] || { echo "usage: bench/growview.sh OUTDIR INPUT.jsonl FIRST MORE BINARY..." >&2; exit 2; }
out=$1 input=$2 first=$3 more=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
head -n "$first" "$input" > "$out/first.jsonl"
tail -n "+$((first + 1))" "$input" | head -n "$more" > "$out/more.jsonl"
printf '| binary | step | wall s | user s | sys s | peak RSS kB | max anon kB | max file kB | quads added | file bytes |\n'
printf '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
i=0
for bin in "$@"; do
	i=$((i + 1))
	db="$out/db$i.db"
	rm -f "$db"
	for step in first more; do
		tag="$out/$i-$step"
		/usr/bin/time -f '%e %U %S %M' -o "$tag.time" \
			bash "$here/memtrace.sh" "$tag.trace" "$bin" ingest --db "$db" "$out/$step.jsonl" > /dev/null 2> "$tag.err"
		read -r wall user sys rss < "$tag.time"
		read -r anon file < <(awk '$1+0 == $1 {if ($3 > a) a = $3; if ($4 > f) f = $4} END {print a+0, f+0}' "$tag.trace")
		quads=$(grep -o '[0-9]* quads added' "$tag.err" | tail -1 | cut -d' ' -f1)
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
			"$(basename "$bin")" "$step" "$wall" "$user" "$sys" "$rss" "$anon" "$file" "${quads:-?}" "$(stat -c %s "$db")"
	done
done
