import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** One file the console serves under /admin/assets/. */
export interface ConsoleAsset {
  type: string;
  body: Buffer;
}

/** The console's own stylesheet: plain, readable, with visible focus for keyboard use. */
const CONSOLE_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #4b5563; --line: #d0d7de; --accent: #0b5cad; --bad: #a40e26; --ok: #116329; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
a { color: var(--accent); }
a:focus, button:focus, input:focus, select:focus, summary:focus { outline: 3px solid #f0a500; outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 16px; padding: 10px 20px; border-bottom: 1px solid var(--line); background: #f6f8fa; }
header nav { display: flex; gap: 14px; flex: 1; }
header .who { color: var(--muted); }
main { padding: 16px 20px 40px; max-width: 1200px; }
h1 { font-size: 1.5rem; margin: 0.3em 0 0.6em; }
h2 { font-size: 1.2rem; margin: 1.4em 0 0.5em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
form.inline { display: inline; }
fieldset { border: 1px solid var(--line); margin: 0.6em 0; padding: 8px 12px; }
label { display: inline-block; margin: 4px 12px 4px 0; }
input[type=text], input[type=password], input[type=number], select { font: inherit; padding: 4px 6px; }
button { font: inherit; padding: 5px 14px; cursor: pointer; }
button.danger { color: #fff; background: var(--bad); border: 1px solid var(--bad); }
.notice { padding: 8px 12px; border-left: 4px solid var(--ok); background: #eef8f0; }
.error { padding: 8px 12px; border-left: 4px solid var(--bad); background: #fdf0f2; }
.secret { font-family: ui-monospace, monospace; font-size: 1.05rem; padding: 6px 10px; background: #f6f8fa; border: 1px solid var(--line); word-break: break-all; }
.figures { display: flex; flex-wrap: wrap; gap: 14px; }
.figure { border: 1px solid var(--line); padding: 10px 14px; min-width: 160px; }
.figure strong { display: block; font-size: 1.4rem; }
.chart { min-height: 20px; margin: 0.5em 0; }
.scroll { max-height: 360px; overflow: auto; display: inline-block; }
.muted { color: var(--muted); }
`;

/**
 * The console's script: progressive only, every page works without it. It draws each chart
 * (uPlot) from the figures of the table the chart names, enables the copy buttons, and asks for
 * confirmation before a form marked data-confirm is sent.
 */
const CONSOLE_JS = `
(function () {
  'use strict';
  var colors = ['#0b5cad', '#a40e26', '#116329', '#8250df', '#bc4c00', '#57606a'];
  function drawChart(el) {
    var table = document.getElementById(el.getAttribute('data-table'));
    if (!table || typeof uPlot === 'undefined') return;
    var labels = Array.prototype.map.call(table.tHead.rows[0].cells, function (c) { return c.textContent; }).slice(1);
    var rows = table.tBodies[0].rows;
    var byTime = {};
    for (var i = 0; i < rows.length; i++) {
      var time = rows[i].cells[0].querySelector('time');
      if (!time) continue;
      var values = [];
      for (var j = 0; j < labels.length; j++) values.push(Number(rows[i].cells[j + 1].textContent.replace(/[^0-9.]/g, '')));
      byTime[Date.parse(time.getAttribute('datetime')) / 1000] = values;
    }
    // Every period of the range, those without requests as zero.
    var from = Number(el.getAttribute('data-from')), to = Number(el.getAttribute('data-to')), step = Number(el.getAttribute('data-step'));
    var times = Object.keys(byTime).map(Number).sort(function (a, b) { return a - b; });
    if (step > 0 && to > from) {
      times = [];
      for (var t = Math.floor(from / step) * step; t < to; t += step) times.push(t);
    }
    var data = [times].concat(labels.map(function (_label, k) {
      return times.map(function (t) { return byTime[t] ? byTime[t][k] : 0; });
    }));
    var series = [{}].concat(labels.map(function (label, k) { return { label: label, stroke: colors[k % colors.length], width: 2 }; }));
    var width = Math.max(320, Math.min(1100, el.clientWidth || 900));
    new uPlot({ width: width, height: 260, series: series, axes: [{}, { size: 60 }] }, data, el);
  }
  function copy(button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target || !navigator.clipboard) return;
    navigator.clipboard.writeText(target.textContent.trim()).then(function () {
      button.textContent = 'Copied';
    });
  }
  document.addEventListener('DOMContentLoaded', function () {
    Array.prototype.forEach.call(document.querySelectorAll('[data-table]'), drawChart);
    Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), function (b) {
      b.hidden = false;
      b.addEventListener('click', function () { copy(b); });
    });
    Array.prototype.forEach.call(document.querySelectorAll('form[data-confirm]'), function (f) {
      f.addEventListener('submit', function (e) {
        if (!window.confirm(f.getAttribute('data-confirm'))) e.preventDefault();
      });
    });
  });
})();
`;

const require = createRequire(import.meta.url);

/** uPlot's files as the package ships them (node_modules), served by the listener itself. */
function packageFile(path: string): Buffer {
  return readFileSync(require.resolve(path));
}

/** Every asset, by file name under /admin/assets/, read once at start. */
export function consoleAssets(): Map<string, ConsoleAsset> {
  const js = 'text/javascript; charset=utf-8';
  const css = 'text/css; charset=utf-8';
  return new Map([
    ['console.css', { type: css, body: Buffer.from(CONSOLE_CSS, 'utf8') }],
    ['console.js', { type: js, body: Buffer.from(CONSOLE_JS, 'utf8') }],
    ['uPlot.min.css', { type: css, body: packageFile('uplot/dist/uPlot.min.css') }],
    ['uPlot.iife.min.js', { type: js, body: packageFile('uplot/dist/uPlot.iife.min.js') }],
  ]);
}
