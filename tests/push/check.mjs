// Checks what the stand-in (standin.mjs) received against what a test
// expects, and prints one line per check ("ok ..." or "FAIL ...") and a
// summary the test may read (after "summary "), as JSON.
//
// Usage: node check.mjs DIR 'EXPECT'   (EXPECT a JSON object; every key optional)
//   service        the service_name label of every series
//   labels         {name: value} every series carries (value "*": any, present)
//   pid            the pid label
//   names          the __name__s that must arrive (others may not)
//   types          {__name__: ["type/unit", ...]} each profile's sample types, in order
//   periods        {__name__: "type/unit"} the period type
//   contiguous     __name__s whose profiles must tile time (each starts where the
//                  one before ended), as for a program busy in every window
//   aligned        every profile but the first of a series starts on a multiple of
//                  this many ns (the wall-clock windows)
//   totals         {"__name__:type": N} the sum over every profile of that value
//   last           {"__name__:type": N} that value in the last profile (a state:
//                  the live heap)
// The live heap's profiles (memory, inuse_*) go by the name "memory/inuse",
// apart from the allocations' (memory, alloc_*).
//   min_windows    {__name__: N}
//   refused        how many requests the stand-in refused (default 0)
//   headers        {name: value} every request carries (lower-case names)
//   absent         strings no request may contain (a secret)
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [dir, expectText = "{}"] = process.argv.slice(2);
const expect = JSON.parse(expectText);
let failures = 0;
function check(what, ok, detail = "") {
  console.log(`  ${ok ? "ok" : "FAIL"} ${what}${detail ? ": " + detail : ""}`);
  if (!ok) failures++;
}

const num = (f) => Number(f.match(/-(\d+)\./)[1]);
const files = readdirSync(dir);
const requests = files.filter((f) => /^req-\d+\.json$/.test(f)).sort((a, b) => num(a) - num(b))
  .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));
const refused = files.filter((f) => /^refused-\d+\.json$/.test(f))
  .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));
check("requests received", requests.length > 0, `${requests.length} taken, ${refused.length} refused`);
check("requests refused", refused.length === (expect.refused ?? 0),
  refused.slice(0, 3).map((r) => `${r.refused.status} ${r.refused.message}`).join("; "));

// every profile, by series name
const byName = {};
let labelsOk = true, labelsDetail = "";
for (const r of requests) {
  for (const s of r.series) {
    const l = s.labels;
    const want = { ...(expect.labels || {}) };
    if (expect.service) want.service_name = expect.service;
    if (expect.pid) want.pid = String(expect.pid);
    for (const [k, v] of Object.entries(want)) {
      if (v === "*" ? !(k in l) : l[k] !== v) {
        labelsOk = false;
        labelsDetail ||= `${k}=${l[k]} in ${JSON.stringify(l)}`;
      }
    }
    for (const p of s.profiles)
      (byName[l.__name__ + (p.profile.types[0]?.type.startsWith("inuse") ? "/inuse" : "")] ||= []).push({ ...p.profile, labels: l, start: BigInt(p.profile.timeNanos),
        end: BigInt(p.profile.timeNanos) + BigInt(p.profile.durationNanos) });
  }
}
check("labels of every series", labelsOk, labelsDetail);

if (expect.names) {
  const got = Object.keys(byName).sort();
  check("profile types (__name__)", JSON.stringify(got) === JSON.stringify([...expect.names].sort()), got.join(", "));
}
for (const [name, types] of Object.entries(expect.types || {})) {
  const bad = (byName[name] || []).find((p) => JSON.stringify(p.types.map((t) => `${t.type}/${t.unit}`)) !== JSON.stringify(types));
  check(`${name} sample types`, !!byName[name] && !bad, bad ? JSON.stringify(bad.types) : types.join(", "));
}
for (const [name, period] of Object.entries(expect.periods || {})) {
  const bad = (byName[name] || []).find((p) => `${p.periodType?.type}/${p.periodType?.unit}` !== period);
  check(`${name} period type`, !!byName[name] && !bad, period);
}
for (const name of expect.contiguous || []) {
  const ps = (byName[name] || []).slice().sort((a, b) => (a.start < b.start ? -1 : 1));
  let gaps = [];
  for (let i = 1; i < ps.length; i++)
    if (ps[i].start !== ps[i - 1].end) gaps.push(`${ps[i - 1].end}..${ps[i].start}`);
  check(`${name} profiles tile time, no gap`, ps.length > 0 && gaps.length === 0,
    `${ps.length} profiles${gaps.length ? ", gaps " + gaps.slice(0, 3).join(" ") : ""}`);
}
if (expect.aligned) {
  let bad = 0;
  for (const ps of Object.values(byName)) {
    const sorted = ps.slice().sort((a, b) => (a.start < b.start ? -1 : 1));
    for (const p of sorted.slice(1)) if (p.start % BigInt(expect.aligned) !== 0n) bad++;
  }
  check("profiles start on the wall clock's windows", bad === 0, `${bad} not aligned`);
}
const totals = {};
for (const [name, ps] of Object.entries(byName))
  for (const p of ps)
    p.types.forEach((t, k) => { totals[`${name}:${t.type}`] = (totals[`${name}:${t.type}`] || 0) + p.totals[k]; });
for (const [key, want] of Object.entries(expect.last || {})) {
  const [name, type] = key.split(":");
  const ps = (byName[name] || []).slice().sort((a, b) => (a.start < b.start ? -1 : 1));
  const p = ps[ps.length - 1];
  const k = p ? p.types.findIndex((t) => t.type === type) : -1;
  check(`last ${key}`, k >= 0 && p.totals[k] === want, `${k >= 0 ? p.totals[k] : "none"} vs ${want}`);
}
for (const [key, want] of Object.entries(expect.totals || {}))
  check(`total ${key}`, totals[key] === want, `${totals[key]} vs ${want}`);
for (const [name, n] of Object.entries(expect.min_windows || {}))
  check(`at least ${n} ${name} profiles`, (byName[name] || []).length >= n, `${(byName[name] || []).length}`);
for (const [h, v] of Object.entries(expect.headers || {})) {
  const bad = requests.find((r) => r.headers[h] !== v);
  check(`header ${h}`, !bad, bad ? `${bad.headers[h]}` : "");
}
for (const secret of expect.absent || []) {
  const found = files.filter((f) => f.endsWith(".bin") || f.endsWith(".json"))
    .find((f) => readFileSync(join(dir, f)).includes(Buffer.from(secret)) && !/^(req|refused)-\d+\.json$/.test(f));
  check("no secret in what was sent", !found, found || "");
}

const summary = { requests: requests.length, refused: refused.length, totals, windows: {} };
for (const [name, ps] of Object.entries(byName)) {
  const sorted = ps.slice().sort((a, b) => (a.start < b.start ? -1 : 1));
  summary.windows[name] = { count: ps.length, first: String(sorted[0].start), last_end: String(sorted[sorted.length - 1].end) };
}
console.log("summary " + JSON.stringify(summary));
process.exit(failures ? 1 : 0);
