#!/usr/bin/env bash
# peakmem.sh runs a command and reports its wall time, its peak resident
# memory (VmHWM: anonymous memory plus the pages of mapped files, such as a
# bbolt database, that it touched) and its peak anonymous memory (RssAnon,
# sampled every 200 ms: the heap and stacks, what the process itself
# holds), in MiB (kB from /proc divided by 1024), on standard error after the command's own output.
#
# Usage: bench/peakmem.sh COMMAND [ARG...]
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: bench/peakmem.sh COMMAND [ARG...]" >&2; exit 2; }
start=$(date +%s.%N)
"$@" &
pid=$!
hwm=0 anon=0
while kill -0 "$pid" 2>/dev/null; do
	if [[ -r /proc/$pid/status ]]; then
		read -r h a < <(awk '/^VmHWM/ {h=$2} /^RssAnon/ {a=$2} END {print h+0, a+0}' "/proc/$pid/status" 2>/dev/null || echo "0 0")
		((h > hwm)) && hwm=$h
		((a > anon)) && anon=$a
	fi
	sleep 0.2
done
rc=0
wait "$pid" || rc=$?
end=$(date +%s.%N)
printf 'wall %.1f s, peak RSS %d MiB, peak anonymous %d MiB, exit %d\n' "$(echo "$end - $start" | bc)" $((hwm / 1024)) $((anon / 1024)) "$rc" >&2
exit "$rc"
