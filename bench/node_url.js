// node_url.js times Node's built-in WHATWG URL parser (new URL(u).href) over
// a file of URLs, one per line, for bench/run.sh. Like bench/gonorm it runs
// one untimed warm-up pass, then PASSES timed passes on one thread, and
// prints one JSON object to stdout:
//
//   {"impl":"node-url","urls":10000,"rejected":0,"passes_s":[0.0121,...]}
//
// Usage: node bench/node_url.js FILE PASSES
'use strict';

const fs = require('fs');

function main(argv) {
  if (argv.length !== 2) {
    throw new Error('usage: node bench/node_url.js FILE PASSES');
  }
  const passes = Number(argv[1]);
  if (!Number.isInteger(passes) || passes < 1) {
    throw new Error(`PASSES must be a positive integer, got ${JSON.stringify(argv[1])}`);
  }
  // Split the way gonorm's readLines does: drop one final "\n", then split.
  let text = fs.readFileSync(argv[0], 'utf8');
  if (text.endsWith('\n')) text = text.slice(0, -1);
  if (text === '') throw new Error(`${argv[0]}: no URLs`);
  const urls = text.split('\n');

  // sink keeps every result observable so no work can be optimized away.
  let sink = 0;
  const pass = () => {
    let rejected = 0;
    for (let i = 0; i < urls.length; i++) {
      try {
        sink += new URL(urls[i]).href.length;
      } catch (e) {
        rejected++;
      }
    }
    return rejected;
  };

  const rejected = pass(); // warm-up, untimed
  const times = [];
  for (let i = 0; i < passes; i++) {
    const start = process.hrtime.bigint();
    pass();
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  process.stdout.write(JSON.stringify({
    impl: 'node-url',
    node: process.version,
    urls: urls.length,
    rejected,
    sink,
    passes_s: times,
  }) + '\n');
}

try {
  main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`node_url.js: ${e.message}\n`);
  process.exit(1);
}
