// svg.test.mjs -- the evidence chart (api/report_svg.c) as a browser draws
// it: Debian's chromium through playwright-core, with no script on the page.
// tests/api/report_forms writes the charts of a set of reports; each is
// embedded as an <img> (how a Markdown page or a static site shows it) and
// must decode at its own size, draw the measured bar's blue and the
// prediction's hatching in the pixels a canvas reads back, and keep its
// title for a screen reader. One screenshot per chart goes to
// DV_TEST_OUTPUT (svg-<name>.png) for a person to look at.
//
// Environment: DV_BUILD_DIR (the build with tests/report_forms), DV_CHROMIUM
// (default /usr/bin/chromium), DV_TEST_OUTPUT.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = process.env;
const build = env.DV_BUILD_DIR;
const outDir = env.DV_TEST_OUTPUT || path.join(os.tmpdir(), 'dv-svg-output');
let ctx, page, dir;

before(async () => {
  assert.ok(build, 'DV_BUILD_DIR is not set');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dv-svg-'));
  execFileSync(path.join(build, 'tests', 'report_forms'), [dir]);
  fs.mkdirSync(outDir, { recursive: true });
  ctx = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: env.DV_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    javaScriptEnabled: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 640, height: 900 },
  });
  page = ctx.pages()[0] || (await ctx.newPage());
});

after(async () => {
  if (ctx) await ctx.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

// Counts the pixels of the <img> near `rgb`, through a canvas the test's
// own script draws it on (the page under test has none).
async function pixels(rgb) {
  return page.evaluate(async (want) => {
    const img = document.querySelector('img');
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (Math.abs(d[i] - want[0]) < 24 && Math.abs(d[i + 1] - want[1]) < 24 && Math.abs(d[i + 2] - want[2]) < 24) n++;
    return n;
  }, rgb);
}

for (const name of ['measured-lesson', 'measured-scenarios', 'analysis-32x8', 'full']) {
  test(`${name}.svg draws in Chromium as an <img>`, async () => {
    const svg = fs.readFileSync(path.join(dir, `${name}.svg`), 'utf8');
    const url = 'data:image/svg+xml;base64,' + Buffer.from(svg).toString('base64');
    await page.goto("about:blank");
    await page.setContent(`<!doctype html><body style="margin:0"><img alt="chart" src="${url}"></body>`);
    const size = await page.evaluate(async () => {
      const img = document.querySelector('img');
      await img.decode();
      return { w: img.naturalWidth, h: img.naturalHeight };
    });
    const [, w, h] = svg.match(/width="(\d+)" height="(\d+)"/);
    assert.deepEqual(size, { w: Number(w), h: Number(h) }, 'the chart decodes at its own size');
    const blue = await pixels([0x1d, 0x4e, 0xd8]);
    const hatch = await pixels([0x7e, 0x22, 0xce]); // the widget's --dw-p
    if (name.startsWith('measured') || name === 'full') assert.ok(blue > 200, `${blue} pixels of the measured bars' blue`);
    assert.ok(hatch > 100, `${hatch} pixels of the predictions' hatching`);
    await page.screenshot({ path: path.join(outDir, `svg-${name}.png`), fullPage: true });
    // Opened as a document of its own, the title is what names it.
    await page.goto('file://' + path.join(dir, `${name}.svg`));
    assert.ok((await page.title()).length > 10, 'the chart has a title');
  });
}
