// shot.mjs HTML PNG [WIDTH HEIGHT]: a screenshot of a report page in headless
// Chromium, as a user would see it (for looking at reports; not a test).
import { chromium } from 'playwright-core';
const [html, png, w = '1400', h = '900'] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: +w, height: +h } });
await page.goto('file://' + html);
await page.waitForTimeout(800);
await page.screenshot({ path: png });
await browser.close();
