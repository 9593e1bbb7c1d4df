// How quickly the flame graph page responds on a big profile: time until
// the page has drawn, and the time of a zoom, a search, the inverted view
// and a thread filter, measured in headless Chromium.  Used by
// bench/report_speed.sh.   Usage: node flame_speed.mjs FILE.html
import { createRequire } from "node:module";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const file = resolve(process.argv[2]);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
let t = Date.now();
await page.goto("file://" + file);
await page.waitForFunction(() => window.corscope !== undefined, null, { timeout: 120000 });
const load = Date.now() - t;
async function timed(fn) { const t0 = Date.now(); await fn(); await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r()))); return Date.now() - t0; }
const name = await page.evaluate(() => { const r = window.corscope.rootName(); return r; });
const zoom = await timed(async () => { const r = await page.evaluate((n) => window.corscope.frameRect(n), name); if (r) await page.mouse.click(r.x, r.y); });
const search = await timed(() => page.fill("#search", "Method1"));
const invert = await timed(() => page.check("#invert"));
const threads = await page.$$eval("#thread option", (os) => os.map((o) => o.value));
const thread = await timed(() => page.selectOption("#thread", threads[threads.length - 1]));
console.log(JSON.stringify({ load_ms: load, zoom_ms: zoom, search_ms: search, invert_ms: invert, thread_filter_ms: thread }));
await browser.close();
