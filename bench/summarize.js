// summarize.js reads the JSON lines run.sh writes, one per run:
// {"label": ..., "round": ..., "result": <what bench/gonorm or
// bench/node_url.js printed>}, and prints a table: for each implementation the median over
// rounds of each round's median seconds per pass, URLs per second at that
// median, the range of round medians, and the speed relative to Node: the
// ratio of the medians, and the median and range over rounds of the ratio
// within each round, which cancels drift between rounds on a noisy machine;
// and the fastest single pass of each, compared the same way.
//
// Usage: node bench/summarize.js RESULTS.jsonl
'use strict';

const fs = require('fs');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// perRound returns the median and range over rounds of node's time over
// r's time in the same round (above 1 means r is faster).
function perRound(r, node) {
  const ratios = [];
  for (const [round, t] of r.byRound) {
    if (node.byRound.has(round)) ratios.push(node.byRound.get(round) / t);
  }
  if (ratios.length === 0) return '-';
  const f = (x) => x.toFixed(2);
  return `${f(median(ratios))}x (${f(Math.min(...ratios))}-${f(Math.max(...ratios))})`;
}

function main(argv) {
  if (argv.length !== 1) throw new Error('usage: node bench/summarize.js RESULTS.jsonl');
  const runs = fs.readFileSync(argv[0], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  if (runs.length === 0) throw new Error(`${argv[0]}: no results`);
  const byLabel = new Map();
  for (const { label, round, result } of runs) {
    if (!byLabel.has(label)) byLabel.set(label, []);
    byLabel.get(label).push({ ...result, round });
  }
  const rows = [];
  for (const [label, rs] of byLabel) {
    const urls = rs[0].urls;
    if (rs.some((r) => r.urls !== urls)) throw new Error(`${label}: runs disagree on the URL count`);
    const roundMedians = rs.map((r) => median(r.passes_s));
    const med = median(roundMedians);
    rows.push({
      label,
      urls,
      rejected: rs[0].rejected,
      rounds: rs.length,
      passes: rs.reduce((n, r) => n + r.passes_s.length, 0),
      med,
      lo: Math.min(...roundMedians),
      hi: Math.max(...roundMedians),
      rate: urls / med,
      // The fastest pass: noise on a shared machine only adds time, so the
      // minimum is the most repeatable estimate of what the code costs.
      best: Math.min(...rs.flatMap((r) => r.passes_s)),
      byRound: new Map(rs.map((r, i) => [r.round, roundMedians[i]])),
    });
  }
  const node = rows.find((r) => r.label.startsWith('node'));
  const head = ['implementation', 'URLs', 'rejected', 'rounds x passes', 'median ms/pass',
    'round medians ms', 'median URLs/s', 'vs Node', 'per-round vs Node', 'fastest pass URLs/s', 'vs Node'];
  const table = [head];
  for (const r of rows) {
    table.push([
      r.label,
      String(r.urls),
      String(r.rejected),
      `${r.rounds} x ${r.passes / r.rounds}`,
      (r.med * 1e3).toFixed(2),
      `${(r.lo * 1e3).toFixed(2)}-${(r.hi * 1e3).toFixed(2)}`,
      Math.round(r.rate).toLocaleString('en-US'),
      node ? `${(r.rate / node.rate).toFixed(2)}x` : '-',
      node ? perRound(r, node) : '-',
      Math.round(r.urls / r.best).toLocaleString('en-US'),
      node ? `${(node.best / r.best).toFixed(2)}x` : '-',
    ]);
  }
  const widths = head.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) {
    process.stdout.write(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ') + '\n');
  }
}

try {
  main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`summarize.js: ${e.message}\n`);
  process.exit(1);
}
