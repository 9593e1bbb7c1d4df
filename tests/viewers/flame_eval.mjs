// Opens a flame graph page in headless Chromium (at an address fragment,
// such as "#from=1s&to=2s", when given), evaluates a JavaScript expression
// in it, usually on the page's window.corscope, and prints the value as
// JSON; fails on a script error or a network request.  For the end-to-end
// tests that read what the page shows (tests/e2e/t_trace.sh).
//   Usage: node flame_eval.mjs FILE.html EXPRESSION [FRAGMENT]
import { createRequire } from "node:module";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [file, expression, fragment = ""] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
page.on("request", (r) => { if (!r.url().startsWith("file:")) errors.push("network request: " + r.url()); });
await page.goto("file://" + resolve(file) + fragment);
await page.waitForFunction(() => window.corscope !== undefined, null, { timeout: 120000 });
const value = await page.evaluate((e) => (0, eval)(e), expression);
await browser.close();
if (errors.length) {
  console.error(errors.join("\n"));
  process.exit(1);
}
console.log(JSON.stringify(value));
