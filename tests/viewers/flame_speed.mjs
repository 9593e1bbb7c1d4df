// How quickly the flame graph page responds on a big profile: time until
// the page has drawn (and where that time goes: the page's own timings),
// and the time of a range selected on the timeline (a drag), a zoom, a
// search, the inverted view and a thread filter, measured in headless
// Chromium.  Used by bench/report_speed.sh.
//   Usage: node flame_speed.mjs FILE.html [RUNS] [open]   (medians of RUNS page
//   loads, default 1; "open": only the opening and the two ranges, for pages
//   whose inverted view is too slow to wait for)
import { createRequire } from "node:module";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const file = resolve(process.argv[2]);
const runs = Number(process.argv[3] || 1);
const openOnly = process.argv[4] === "open";
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
const results = [];
for (let run = 0; run < runs; run++) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const t = Date.now();
  await page.goto("file://" + file);
  await page.waitForFunction(() => window.corscope !== undefined, null, { timeout: 120000 });
  const r = { load_ms: Date.now() - t };
  const inPage = await page.evaluate(() => {
    const t = window.corscope.timings, nav = performance.getEntriesByType("navigation")[0];
    return { file_ms: nav.responseEnd, json_ms: t.parsed - t.start, draw_ms: t.drawn - t.parsed };
  });
  Object.assign(r, inPage);
  // each action: from the input to the next frame the page paints
  async function timed(fn) {
    const t0 = Date.now();
    await fn();
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));
    return Date.now() - t0;
  }
  const tl = await page.evaluate(() => window.corscope.timeline().canvas);
  const y = tl.y + 20;
  // a drag over the middle fifth of the timeline, then another range
  await page.mouse.move(tl.x + tl.width * 0.4, y);
  await page.mouse.down();
  await page.mouse.move(tl.x + tl.width * 0.6, y, { steps: 4 });
  r.range_ms = await timed(() => page.mouse.up());
  r.range_samples = (await page.evaluate(() => window.corscope.range())).samples;
  await page.mouse.move(tl.x + tl.width * 0.1, y);
  await page.mouse.down();
  await page.mouse.move(tl.x + tl.width * 0.9, y, { steps: 4 });
  r.range2_ms = await timed(() => page.mouse.up());
  if (openOnly) { results.push(r); await page.close(); continue; }
  r.whole_ms = await timed(() => page.click("#whole"));
  const name = await page.evaluate(() => window.corscope.rootName());
  r.zoom_ms = await timed(async () => { const b = await page.evaluate((n) => window.corscope.frameRect(n), name); if (b) await page.mouse.click(b.x, b.y); });
  r.search_ms = await timed(() => page.fill("#search", "Method1"));
  r.invert_ms = await timed(() => page.check("#invert"));
  const threads = await page.$$eval("#thread option", (os) => os.map((o) => o.value));
  r.thread_filter_ms = await timed(() => page.selectOption("#thread", threads[threads.length - 1]));
  results.push(r);
  await page.close();
}
await browser.close();
const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };
const out = {};
for (const k of Object.keys(results[0])) out[k] = Math.round(median(results.map((r) => r[k])));
console.log(JSON.stringify(out));
