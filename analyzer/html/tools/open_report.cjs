// Opens a page of `gpumemtrace html` in Debian's headless Chromium with playwright-core, and reports what
// a person would see, as one JSON object on stdout. The browser test, scripts/screenshot.sh and the
// benchmark use it.
//
//   NODE_PATH=build/analyzer/html/node_modules node open_report.cjs PAGE [options]
//     --screenshot FILE   a PNG of the window after the clicks (--full-page: of the whole page)
//     --click-ns T        click the first timeline where time T (ns) is drawn; may be repeated
//     --width N, --height N  the window's size in CSS pixels (default 1280 x 900)
//     --expand-all        open every collapsible tree node (the leaks, growth and OOM trees) after the clicks
//
// Output: {"open_ms", "console_errors": [...], "sections": [the ids of the page's sections], "forecast": [the
// text of each device's forecast, then of each stack it names], "timelines", "flame_frames", "whatif_rows" (the
// cells of the what-if tables, a row each, the devices' one after the other), "expanded" (with --expand-all: the tree nodes opened, the deepest
// nesting of them),
// "clicks": [{"time_ns",
// "ns_per_pixel", "clicked_ns" (the time the page took the click for: within a pixel of time_ns),
// "live_bytes", "moment_ns", "start_ns", "end_ns", "rows": [{"bytes", "allocations", "where"}],
// "flame_names": [...]}]}. Exit status 0 when the page was opened, 1 on bad arguments, 2 when the
// browser failed.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const kChromium = process.env.GPUMEMTRACE_CHROMIUM || '/usr/bin/chromium';

function parse(argv) {
  const options = { page: null, screenshot: null, fullPage: false, clicks: [], width: 1280, height: 900, expandAll: false };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--screenshot') options.screenshot = argv[++i];
    else if (arg === '--click-ns') options.clicks.push(Number(argv[++i]));
    else if (arg === '--full-page') options.fullPage = true;
    else if (arg === '--expand-all') options.expandAll = true;
    else if (arg === '--width') options.width = Number(argv[++i]);
    else if (arg === '--height') options.height = Number(argv[++i]);
    else if (!options.page && !arg.startsWith('--')) options.page = arg;
    else throw new Error(`unknown argument ${arg}`);
  }
  if (!options.page) throw new Error('usage: open_report.cjs PAGE [--screenshot FILE [--full-page]] [--click-ns T]... [--width N] [--height N]');
  return options;
}

// What the live-set panel shows now.
async function liveSet(page) {
  return page.evaluate(() => {
    const panel = document.getElementById('liveset');
    if (!panel) return null;
    const rows = [...panel.querySelectorAll('table.sites tr')].slice(1).map((tr) => ({
      bytes: Number(tr.getAttribute('data-bytes')),
      allocations: Number(tr.querySelector('td.allocations').textContent),
      where: tr.querySelector('td.where').textContent,
    }));
    const selected = window.gpumemtrace.selected;
    return {
      live_bytes: Number(panel.getAttribute('data-live-bytes')),
      clicked_ns: selected ? selected.clickedNs : null,
      moment_ns: selected ? selected.moment.time_ns : null,
      start_ns: selected ? selected.moment.start_ns : null,
      end_ns: selected ? selected.moment.end_ns : null,
      rows,
      flame_names: [...panel.querySelectorAll('.flame svg g title')].map((t) => t.textContent),
    };
  });
}

async function main() {
  const options = parse(process.argv.slice(2));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumemtrace-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: kChromium,
    headless: true,
    viewport: { width: options.width, height: options.height },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = context.pages()[0] || (await context.newPage());
    const consoleErrors = [];
    page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()); });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
    // Nothing may be fetched: the page is one file.
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith('file:')) return route.continue();
      consoleErrors.push(`fetched ${route.request().url()}`);
      return route.abort();
    });
    const started = Date.now();
    await page.goto(`file://${path.resolve(options.page)}`);
    await page.waitForFunction(() => window.gpumemtrace && window.gpumemtrace.ready, null, { timeout: 60000 });
    const openMs = Date.now() - started;

    const result = {
      open_ms: openMs,
      console_errors: consoleErrors,
      sections: await page.evaluate(() => [...document.querySelectorAll('section')].map((s) => s.id)),
      forecast: await page.evaluate(() => [...document.querySelectorAll('#forecast h3, #forecast li')].map((e) => e.textContent)),
      timelines: await page.locator('.timeline canvas').count(),
      flame_frames: await page.locator('#liveset .flame svg g rect').count(),
      whatif_rows: await page.evaluate(() =>
        [...document.querySelectorAll('#whatif table tr')].filter((tr) => tr.querySelector('td')).map((tr) => [...tr.children].map((td) => td.textContent))),
      initial: await liveSet(page),
      clicks: [],
    };
    for (const timeNs of options.clicks) {
      const point = await page.evaluate((t) => {
        const chart = window.gpumemtrace.charts[0];
        const rect = chart.over.getBoundingClientRect();
        const nsPerPixel = (chart.posToVal(1, 'x') - chart.posToVal(0, 'x')) * 1e9;
        return { x: rect.left + chart.valToPos(t / 1e9, 'x'), y: rect.top + rect.height / 2, nsPerPixel };
      }, timeNs);
      await page.mouse.click(point.x, point.y);
      result.clicks.push({ time_ns: timeNs, ns_per_pixel: point.nsPerPixel, ...(await liveSet(page)) });
    }
    if (options.expandAll) {
      result.expanded = await page.evaluate(() => {
        const all = [...document.querySelectorAll('details')];
        for (const details of all) details.open = true;
        let deepest = 0;
        for (const details of all) {
          let depth = 0;
          for (let node = details; node; node = node.parentElement) if (node.tagName === 'DETAILS') ++depth;
          deepest = Math.max(deepest, depth);
        }
        return { nodes: all.length, deepest };
      });
      // Laid out with every node open: a page that nests too deep dies here.
      result.expanded.height = await page.evaluate(() => document.body.scrollHeight);
    }
    if (options.screenshot) await page.screenshot({ path: options.screenshot, fullPage: options.fullPage });
    result.console_errors = consoleErrors;
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`open_report: ${error.stack || error}\n`);
  process.exit(error.message && error.message.startsWith('usage') ? 1 : 2);
});
