// verify.mjs reads every record of the WARC files given as arguments with
// webrecorder's warcio.js, an implementation independent of provgraph's
// writer, recomputes each record's WARC-Block-Digest and (for responses)
// WARC-Payload-Digest, and prints one JSON line per record. It exits 1 if a
// digest does not verify or a file cannot be read.
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { WARCParser } from "warcio";

function check(header, bytes) {
  if (!header) return null;
  const [algo, value] = header.split(":", 2);
  const names = { sha256: "sha256", sha1: "sha1" };
  if (!names[algo]) return false;
  return createHash(names[algo]).update(bytes).digest("hex") === value.toLowerCase();
}

let bad = 0;
for (const file of process.argv.slice(2)) {
  try {
    const parser = new WARCParser(createReadStream(file), { parseHttp: false });
    for await (const record of parser) {
      const block = await record.readFully(false);
      const out = {
        file,
        offset: parser.offset,
        type: record.warcType,
        id: record.warcHeader("WARC-Record-ID"),
        uri: record.warcTargetURI || null,
        date: record.warcDate,
        concurrent: record.warcConcurrentTo,
        truncated: record.warcHeader("WARC-Truncated") || null,
        ip: record.warcHeader("WARC-IP-Address") || null,
        length: block.length,
        block_ok: check(record.warcBlockDigest, block),
        payload_ok: null,
      };
      if (record.warcType === "response" || record.warcType === "request") {
        // The payload is the block after the HTTP head's empty line.
        let i = 0;
        for (; i + 3 < block.length; i++) {
          if (block[i] === 13 && block[i + 1] === 10 && block[i + 2] === 13 && block[i + 3] === 10) break;
        }
        const payload = block.subarray(Math.min(i + 4, block.length));
        out.payload_ok = check(record.warcPayloadDigest, payload);
        out.status = record.warcType === "response" ? Number(new TextDecoder().decode(block.subarray(0, 16)).split(" ")[1]) : null;
      }
      if (out.block_ok === false || out.payload_ok === false) bad++;
      console.log(JSON.stringify(out));
    }
  } catch (e) {
    console.error(`${file}: ${e}`);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
