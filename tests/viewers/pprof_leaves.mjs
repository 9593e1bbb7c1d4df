// Sums a pprof file's samples by leaf function, decoded by pprof-format:
// prints the sample types, then one line per leaf: name, then each value.
// Usage: node pprof_leaves.mjs FILE.pb.gz
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Profile } = require("pprof-format");
const p = Profile.decode(gunzipSync(readFileSync(process.argv[2])));
const str = (i) => p.stringTable.strings[Number(i)];
console.log("types\t" + p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`).join("\t"));
const fn = new Map(p.function.map((f) => [Number(f.id), str(f.name)]));
const loc = new Map(p.location.map((l) => [Number(l.id), fn.get(Number(l.line[0].functionId))]));
const sums = new Map();
for (const s of p.sample) {
  const leaf = loc.get(Number(s.locationId[0]));
  const v = sums.get(leaf) ?? s.value.map(() => 0);
  s.value.forEach((x, i) => (v[i] += Number(x)));
  sums.set(leaf, v);
}
for (const [name, v] of sums) console.log(`${name}\t${v.join("\t")}`);
