// Checks corscope's reports with the consumers people use, not with
// corscope's own reader:
//   pprof       decoded by pprof-format (the maintained JS decoder of
//               profile.proto): sample types, samples, locations, functions,
//               mappings, and totals that agree with the collapsed report;
//   speedscope  validated against the speedscope file format's schema (ajv),
//               plus what the schema cannot say (frame indexes in range,
//               one weight per sample, samples in time order);
//   chrome      parsed as Chrome trace events: a named track per thread,
//               every sample in "samples" with its stack in "stackFrames"
//               (the same stacks and counts as collapsed),
//               slices well nested on each track;
//   flamegraph  opened in headless Chromium (playwright-core): a click on a
//               frame zooms to it, a search counts its matches and their
//               share, the inverted view puts leaves at the root, the thread
//               filter narrows the total; the timeline: a drag selects a
//               range, which goes into the address, and the graph then
//               holds exactly the samples `corscope report --from --to` keeps
//               for that range (the CLI is run on RECORDING to compare);
//               the address alone opens the same range. Screenshots go to
//               OUT_DIR.
//   events      when DIR also holds events.{pb.gz,speedscope.json,html} and
//               events.{alloc,live}.collapsed (a recording of cpu, alloc and
//               live, reported with --event alloc): pprof has the memory
//               sample types go tool pprof knows, with totals that agree;
//               speedscope has a profile per (event, thread) in bytes; the
//               flame graph's event selector switches between the events and
//               each shows its own total; the timeline has a row of GC
//               pauses, as many as `report -f gc` counts (events.gc.txt).
// Usage: node check.mjs DIR METHOD [OUT_DIR RECORDING]   (DIR holds
//        report.{pb.gz,speedscope.json,trace.json,html,collapsed}; METHOD is
//        a hot method's display name; RECORDING is the recording of report.*,
//        and CORSCOPE the command, for the range checks)
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const [dir, method, outDir = dir, recording] = process.argv.slice(2);
import { execFileSync } from "node:child_process";
// the CLI's collapsed stacks of RECORDING for extra options: total weight
// and the weight through METHOD
function cliCollapsed(args) {
  const text = execFileSync(process.env.CORSCOPE || "corscope", ["report", "-f", "collapsed", ...args, recording], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const lines = text.trim() ? text.trim().split("\n") : [];
  const weight = (l) => Number(l.slice(l.lastIndexOf(" ") + 1));
  return {
    total: lines.reduce((s, l) => s + weight(l), 0),
    method: lines.filter((l) => l.slice(0, l.lastIndexOf(" ")).split(";").includes(method)).reduce((s, l) => s + weight(l), 0),
  };
}
let failures = 0;
function check(what, ok, detail = "") {
  console.log(`  ${ok ? "ok" : "FAIL"} ${what}${detail ? ": " + detail : ""}`);
  if (!ok) failures++;
}

// the truth to compare with: collapsed stacks from the same recording
const collapsed = readFileSync(join(dir, "report.collapsed"), "utf8").trim().split("\n");
const collapsedTotal = collapsed.reduce((s, l) => s + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
const methodInCollapsed = collapsed.filter((l) => l.slice(0, l.lastIndexOf(" ")).split(";").includes(method))
  .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);

// ---- pprof ---------------------------------------------------------------
{
  const { Profile } = require("pprof-format");
  const p = Profile.decode(gunzipSync(readFileSync(join(dir, "report.pb.gz"))));
  const str = (i) => p.stringTable.strings[Number(i)];
  const types = p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`);
  check("pprof sample types", types[0] === "samples/count" && /^(cpu|wall)\/nanoseconds$/.test(types[1]), types.join(", "));
  check("pprof has samples, locations, functions, mappings",
    p.sample.length > 0 && p.location.length > 0 && p.function.length > 0 && p.mapping.length > 0,
    `${p.sample.length} samples, ${p.location.length} locations, ${p.function.length} functions, ${p.mapping.length} mappings`);
  const locs = new Map(p.location.map((l) => [Number(l.id), l]));
  const funcs = new Map(p.function.map((f) => [Number(f.id), f]));
  const maps = new Set(p.mapping.map((m) => Number(m.id)));
  // collapsed weights count the event's period (the cpu clock weighs each
  // sample by the time it stands for): pprof's time values are weight x period
  const period = Number(p.period);
  let linked = true, methodSamples = 0, total = 0, labels = false;
  for (const s of p.sample) {
    total += Number(s.value[1]) / period;
    let hasMethod = false;
    for (const id of s.locationId) {
      const l = locs.get(Number(id));
      if (!l || (Number(l.mappingId) && !maps.has(Number(l.mappingId)))) { linked = false; continue; }
      const f = funcs.get(Number(l.line[0].functionId));
      if (!f) { linked = false; continue; }
      if (str(f.name) === method) hasMethod = true;
    }
    if (hasMethod) methodSamples += Number(s.value[1]) / period;
    labels ||= s.label.some((lb) => str(lb.key) === "thread");
  }
  check("pprof locations, functions and mappings all resolve", linked);
  check("pprof samples carry thread labels", labels);
  check("pprof total time = collapsed total x period", period > 0 && total === collapsedTotal, `${total} vs ${collapsedTotal}`);
  check(`pprof time through ${method} = collapsed`, methodSamples === methodInCollapsed, `${methodSamples} vs ${methodInCollapsed}`);
}

// ---- speedscope -------------------------------------------------------------
{
  const Ajv = require("ajv");
  const schema = JSON.parse(readFileSync(new URL("./speedscope-schema.json", import.meta.url), "utf8"));
  const file = JSON.parse(readFileSync(join(dir, "report.speedscope.json"), "utf8"));
  const validate = new Ajv({ strict: false }).compile(schema);
  check("speedscope file matches the schema", validate(file), JSON.stringify(validate.errors || "").slice(0, 300));
  const frames = file.shared.frames.length;
  let inRange = true, lengths = true, ordered = true, samples = 0, methodSamples = 0;
  const methodFrame = file.shared.frames.findIndex((f) => f.name === method);
  for (const prof of file.profiles) {
    lengths &&= prof.samples.length === prof.weights.length;
    for (const st of prof.samples) {
      inRange &&= st.every((i) => Number.isInteger(i) && i >= 0 && i < frames);
      if (st.includes(methodFrame)) methodSamples++;
    }
    ordered &&= prof.startValue <= prof.endValue;
    samples += prof.samples.length;
  }
  check("speedscope frame indexes in range, one weight per sample", inRange && lengths && ordered);
  check("speedscope has one profile per sampled thread", file.profiles.length >= 1, `${file.profiles.length} profiles, ${samples} samples`);
  check(`speedscope has ${method}`, methodFrame >= 0 && methodSamples > 0, `${methodSamples} samples`);
}

// ---- chrome trace -------------------------------------------------------------
{
  const trace = JSON.parse(readFileSync(join(dir, "report.trace.json"), "utf8"));
  const ev = trace.traceEvents;
  // a track is a (process, thread) pair: the runtime's events have a process of their own
  const track = (e) => `${e.pid}/${e.tid}`;
  const named = new Set(ev.filter((e) => e.ph === "M" && e.name === "thread_name").map(track));
  const slices = ev.filter((e) => e.ph === "X");
  check("chrome trace has named thread tracks and slices", named.size > 0 && slices.length > 0, `${named.size} tracks, ${slices.length} slices`);
  check("chrome slices are on named tracks", slices.every((e) => named.has(track(e))));
  // well nested per track: sorted by start (longest first), each slice ends
  // inside the one that encloses it
  let nested = true;
  const byTid = new Map();
  for (const e of slices) (byTid.get(track(e)) || byTid.set(track(e), []).get(track(e))).push(e);
  for (const list of byTid.values()) {
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const open = [];
    for (const e of list) {
      while (open.length && open[open.length - 1].ts + open[open.length - 1].dur <= e.ts + 1e-6) open.pop();
      if (open.length && e.ts + e.dur > open[open.length - 1].ts + open[open.length - 1].dur + 1e-3) nested = false;
      open.push(e);
    }
  }
  check("chrome slices are well nested on each track", nested);
  check(`chrome trace has ${method} slices`, slices.some((e) => e.name === method));
  // every sample, its stack by reference into stackFrames (the format's
  // "samples" and "sf"): the same stacks and counts as the collapsed output
  const frames = trace.stackFrames || {}, samples = trace.samples || [];
  // (collapsed writes ';' and line breaks in names as '_')
  const stackOf = (sf) => { const names = []; for (let f = frames[sf]; f; f = frames[f.parent]) names.push(f.name.replace(/[;\n\r]/g, "_")); return names.reverse().join(";"); };
  const counts = new Map();
  let resolved = true, weights = 0;
  for (const s of samples) {
    if (!frames[s.sf] || !track(s) || s.ts === undefined) resolved = false;
    const k = stackOf(s.sf);
    counts.set(k, (counts.get(k) || 0) + s.weight);
    weights += s.weight;
  }
  check("chrome samples refer to stackFrames on named tracks", samples.length > 0 && resolved && samples.every((s) => named.has(track(s))), `${samples.length} samples, ${Object.keys(frames).length} frames`);
  const want = new Map(collapsed.map((l) => [l.slice(0, l.lastIndexOf(" ")), Number(l.slice(l.lastIndexOf(" ") + 1))]));
  const differ = [...new Set([...want.keys(), ...counts.keys()])].filter((k) => want.get(k) !== counts.get(k));
  check("chrome samples' stacks and weights equal the collapsed stacks", differ.length === 0 && weights === collapsedTotal,
    `${weights} against ${collapsedTotal}; ${differ.length} stacks differ${differ.length ? ", e.g. " + differ[0] + ": " + counts.get(differ[0]) + " against " + want.get(differ[0]) : ""}`);
}

// ---- flame graph in Chromium ---------------------------------------------------
{
  const { chromium } = require("playwright-core");
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const requests = [];
  page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto("file://" + resolve(dir, "report.html"));
  await page.waitForFunction(() => window.corscope !== undefined);
  mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: join(outDir, "flamegraph.png"), fullPage: true });
  check("flame graph loads without script errors or network requests", errors.length === 0 && requests.length === 0, errors.concat(requests).join("; "));

  const rect = await page.evaluate((m) => window.corscope.frameRect(m), method);
  check(`flame graph draws ${method}`, !!rect);
  if (rect) {
    await page.mouse.move(rect.x, rect.y);
    const tipShown = await page.evaluate(() => getComputedStyle(document.getElementById("tip")).display !== "none" && document.getElementById("tip").textContent);
    check("hovering shows the frame's details", !!tipShown && tipShown.includes(method) && /of all/.test(tipShown), String(tipShown).slice(0, 120));
    await page.mouse.click(rect.x, rect.y);
    const zoomed = await page.evaluate(() => window.corscope.zoomed());
    check("clicking a frame zooms to it", zoomed === method, String(zoomed));
    const crumbs = await page.textContent("#crumbs");
    check("the zoomed frame is in the breadcrumbs", crumbs.includes(method));
    await page.screenshot({ path: join(outDir, "flamegraph-zoomed.png"), fullPage: true });
    await page.click("#reset");
    check("reset zoom", (await page.evaluate(() => window.corscope.zoomed())) === null);
  }

  // the method's own frames, by a regular expression anchored at both ends
  // (a text search also finds the frames that name it, such as "[JIT] ...")
  await page.fill("#search", "/^" + method.replace(/[.$]/g, "\\$&") + "$/");
  const r = await page.evaluate(() => window.corscope.matches());
  const status = await page.textContent("#status");
  const share = (100 * methodInCollapsed / collapsedTotal).toFixed(2);
  check("search counts matching frames and their share", r.frames >= 1 && status.includes(`${share}%`), `${r.frames} frames, status "${status}", expected ${share}%`);
  await page.fill("#search", method);
  const m = await page.evaluate(() => window.corscope.matches());
  check("a text search finds those frames and any that name them", m.frames >= r.frames && m.value >= r.value, `${m.frames} vs ${r.frames}`);
  await page.screenshot({ path: join(outDir, "flamegraph-search.png"), fullPage: true });
  await page.fill("#search", "");

  await page.check("#invert");
  const root = await page.evaluate(() => window.corscope.rootName());
  const leaves = new Set(collapsed.map((l) => { const s = l.slice(0, l.lastIndexOf(" ")).split(";"); return s[s.length - 1]; }));
  check("inverted view puts leaf frames at the root", leaves.has(root), String(root));
  await page.screenshot({ path: join(outDir, "flamegraph-inverted.png"), fullPage: true });
  await page.uncheck("#invert");

  const options = await page.$$eval("#thread option", (os) => os.map((o) => o.value));
  check("thread filter lists the threads", options.length >= 2, `${options.length - 1} threads`);
  const all = await page.evaluate(() => window.corscope.matches().total);
  await page.selectOption("#thread", options[options.length - 1]);
  const one = await page.evaluate(() => window.corscope.matches().total);
  check("thread filter narrows the total", one > 0 && one <= all, `${one} of ${all}`);
  await page.selectOption("#thread", "-1");

  // the timeline: a range dragged on it is what --from/--to would keep
  const tl = await page.evaluate(() => window.corscope.timeline());
  check("the timeline is drawn, with the busiest threads' strips", (await page.isVisible("#tl")) && tl.threads >= 1 && tl.span > 0,
    `${tl.threads} strips, ${tl.span} us`);
  const whole = await page.evaluate(() => window.corscope.range());
  const y = tl.canvas.y + 20;
  await page.mouse.move(tl.canvas.x + tl.canvas.width * 0.3, y);
  await page.mouse.down();
  await page.mouse.move(tl.canvas.x + tl.canvas.width * 0.62, y, { steps: 5 });
  await page.mouse.up();
  const got = await page.evaluate(() => window.corscope.range());
  const hash = await page.evaluate(() => location.hash);
  const hm = /^#from=([0-9.]+s)&to=([0-9.]+s)$/.exec(hash);
  check("a drag on the timeline selects a range, and the address says which", !!hm && got.from !== null && got.samples > 0 && got.samples < whole.samples,
    `${hash}: ${got.samples} of ${whole.samples} samples`);
  await page.screenshot({ path: join(outDir, "flamegraph-range.png"), fullPage: true });
  if (hm && recording) {
    const byCount = cliCollapsed(["--weight", "samples", "--from", hm[1], "--to", hm[2]]);
    const byValue = cliCollapsed(["--from", hm[1], "--to", hm[2]]);
    check(`the range holds the samples report --from ${hm[1]} --to ${hm[2]} keeps`, got.count === byCount.total && got.samples === byCount.total,
      `${got.count} vs ${byCount.total}`);
    check("the range's total is --from/--to's", got.value === byValue.total * got.period, `${got.value} vs ${byValue.total} x ${got.period}`);
    await page.fill("#search", "/^" + method.replace(/[.$]/g, "\\$&") + "$/");
    const inRange = await page.evaluate(() => window.corscope.matches());
    check(`the range's ${method} is --from/--to's`, inRange.value === byValue.method * got.period, `${inRange.value} vs ${byValue.method} x ${got.period}`);
    await page.fill("#search", "");
    // the address alone opens the same range
    const again = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await again.goto("file://" + resolve(dir, "report.html") + hash);
    await again.waitForFunction(() => window.corscope !== undefined);
    const shared = await again.evaluate(() => window.corscope.range());
    check("the address opens the same range", shared.from === got.from && shared.to === got.to && shared.value === got.value,
      `${shared.from}-${shared.to}: ${shared.value} vs ${got.from}-${got.to}: ${got.value}`);
    await again.close();
  }
  await page.click("#whole");
  const back = await page.evaluate(() => ({ r: window.corscope.range(), hash: location.hash }));
  check("'whole recording' takes the range away", back.r.from === null && back.r.value === whole.value && back.hash === "", JSON.stringify(back));
  await browser.close();
}

// ---- several events (cpu, alloc, live) -------------------------------------------
import { existsSync } from "node:fs";
if (existsSync(join(dir, "events.html"))) {
  const sum = (file) => readFileSync(join(dir, file), "utf8").trim().split("\n")
    .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  const allocTotal = sum("events.alloc.collapsed"), liveTotal = sum("events.live.collapsed");
  {
    const { Profile } = require("pprof-format");
    const p = Profile.decode(gunzipSync(readFileSync(join(dir, "events.pb.gz"))));
    const str = (i) => p.stringTable.strings[Number(i)];
    const types = p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`);
    const want = ["samples/count", "cpu/nanoseconds", "alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"];
    check("pprof has the memory sample types", want.every((w) => types.includes(w)), types.join(", "));
    check("pprof's default sample type is the reported event's", str(p.defaultSampleType) === "alloc_space", str(p.defaultSampleType));
    const col = (name) => types.indexOf(name);
    let space = 0, inuse = 0, objects = 0, mixed = false;
    for (const s of p.sample) {
      space += Number(s.value[col("alloc_space/bytes")]);
      inuse += Number(s.value[col("inuse_space/bytes")]);
      objects += Number(s.value[col("alloc_objects/count")]);
      mixed ||= Number(s.value[col("cpu/nanoseconds")]) > 0 && Number(s.value[col("alloc_space/bytes")]) > 0;
    }
    check("pprof alloc_space = the alloc collapsed total", space === allocTotal, `${space} vs ${allocTotal}`);
    check("pprof inuse_space = the live collapsed total", inuse === liveTotal, `${inuse} vs ${liveTotal}`);
    check("pprof alloc_objects counted, each sample of one event", objects > 0 && !mixed, `${objects} objects`);
  }
  {
    const Ajv = require("ajv");
    const schema = JSON.parse(readFileSync(new URL("./speedscope-schema.json", import.meta.url), "utf8"));
    const file = JSON.parse(readFileSync(join(dir, "events.speedscope.json"), "utf8"));
    const validate = new Ajv({ strict: false }).compile(schema);
    check("speedscope (several events) matches the schema", validate(file), JSON.stringify(validate.errors || "").slice(0, 300));
    const of = (event) => file.profiles.filter((p) => p.name.endsWith(`(${event})`));
    const weight = (ps) => ps.reduce((s, p) => s + p.weights.reduce((a, b) => a + b, 0), 0);
    check("speedscope has a profile per (event, thread)", of("cpu").length >= 1 && of("alloc").length >= 1 && of("live").length >= 1,
      file.profiles.map((p) => p.name).join(", "));
    check("speedscope opens on the reported event", file.profiles[0].name.endsWith("(alloc)"), file.profiles[0].name);
    check("speedscope alloc profiles are in bytes and add up", of("alloc").every((p) => p.unit === "bytes") && weight(of("alloc")) === allocTotal,
      `${weight(of("alloc"))} vs ${allocTotal}`);
  }
  {
    const { chromium } = require("playwright-core");
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto("file://" + resolve(dir, "events.html"));
    await page.waitForFunction(() => window.corscope !== undefined);
    const events = await page.evaluate(() => window.corscope.events());
    const shown = await page.isVisible("#event");
    check("flame graph lists the recording's events in a selector", shown && ["cpu", "alloc", "live"].every((e) => events.includes(e)), events.join(", "));
    check("flame graph opens on the reported event", (await page.evaluate(() => window.corscope.event())) === "alloc");
    const allocShown = await page.evaluate(() => window.corscope.matches().total);
    check("the alloc view's total is the alloc collapsed total", allocShown === allocTotal, `${allocShown} vs ${allocTotal}`);
    await page.screenshot({ path: join(outDir, "flamegraph-alloc.png"), fullPage: true });
    const liveIndex = events.indexOf("live");
    await page.selectOption("#event", String(liveIndex));
    const live = await page.evaluate(() => ({ event: window.corscope.event(), total: window.corscope.matches().total }));
    const status = await page.textContent("#status");
    const title = await page.textContent("#title");
    check("selecting live shows the live heap", live.event === "live" && live.total === liveTotal && status.startsWith("live:") && title.endsWith("(live)"),
      `${live.event} ${live.total} vs ${liveTotal}, status "${status}", title "${title}"`);
    await page.screenshot({ path: join(outDir, "flamegraph-live.png"), fullPage: true });
    await page.selectOption("#event", String(events.indexOf("cpu")));
    const cpu = await page.evaluate(() => ({ event: window.corscope.event(), total: window.corscope.matches().total }));
    check("selecting cpu shows CPU time", cpu.event === "cpu" && cpu.total > 0 && cpu.total !== liveTotal, `${cpu.event} ${cpu.total}`);
    const options = await page.$$eval("#thread option", (os) => os.length);
    check("the thread filter follows the event", options >= 2, `${options - 1} threads`);
    check("switching events raises no script errors", errors.length === 0, errors.join("; "));
    if (existsSync(join(dir, "events.gc.txt"))) {
      const pauses = Number((/^# pauses: ([0-9]+)/m.exec(readFileSync(join(dir, "events.gc.txt"), "utf8")) || [])[1]);
      const marks = await page.evaluate(() => window.corscope.timeline().marks);
      const counted = await page.evaluate(() => window.corscope.marks("gc"));
      check("the timeline marks every GC pause", marks.includes("gc") && counted === pauses, `${counted} marked, ${pauses} in report -f gc`);
      await page.screenshot({ path: join(outDir, "flamegraph-gc.png"), fullPage: true });
    }
    await browser.close();
  }
}

writeFileSync(join(outDir, "viewers.txt"), failures ? `${failures} failed\n` : "all passed\n");
console.log(failures ? `viewers: ${failures} check(s) failed` : "viewers: all checks passed");
process.exit(failures ? 1 : 0);
