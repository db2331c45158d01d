// docs/performance.md's "Latest result", made from bench/results/history.json: each figure from
// the newest run that measured it, beside its target. `npm run bench:docs` rewrites the section
// between the two marker comments; `npm run bench:docs -- --check` fails when it differs.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const HISTORY = path.join(ROOT, 'bench/results/history.json');
export const PAGE = path.join(ROOT, 'docs/performance.md');
export const START = '<!-- latest-result:start -->';
export const END = '<!-- latest-result:end -->';

const int = (n) => Number(n).toLocaleString('en-US', { maximumFractionDigits: 0 });
const ratio = (n) => `${n.toFixed(2)}x`;
const ms = (n) => n.toFixed(1);
const bold = (text, met) => (met ? `**${text}**` : text);

function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 ? '---' : '--:')).join('|')}|`]
    .concat(rows.map((r) => `| ${r.join(' | ')} |`))
    .join('\n');
}

/** The newest run for which `pick` gives a value, and that value. */
function newest(runs, pick) {
  for (let i = runs.length - 1; i >= 0; i--) {
    const value = pick(runs[i]);
    if (value !== null && value !== undefined) return { run: runs[i].run, value };
  }
  return null;
}

const FIXED_RATE = [
  ['listPets', 'listPets, one key'],
  ['listPetsManyKeys', 'listPets, 2,000 keys'],
  ['listPetsStatus', 'listPets status=sold limit=100'],
  ['getPet', 'getPet'],
  ['createPet', 'createPet'],
  ['createPetIdempotent', 'createPet with Idempotency-Key'],
];

// Capacity: the service's req/s over raw's, at least the target.
const CAPACITY = [
  ['listPetsVsRaw', 'listPets, one key, capacity vs raw'],
  ['listPetsManyKeysVsRaw', 'listPets, 2,000 keys, capacity vs raw'],
  ['listPetsStatusVsRaw', 'listPets status=sold limit=100 vs raw'],
  ['getPetVsRaw', 'getPet vs raw'],
  ['createPetVsRaw', 'createPet vs raw'],
  ['createPetIdempotentVsRawInsert', "createPet with Idempotency-Key vs raw's plain INSERT"],
];

function fixedRateTable(runs, used) {
  const rows = [];
  for (const [scenario, label] of FIXED_RATE) {
    const found = newest(runs, (r) => r.fixedRate?.[scenario]);
    if (!found) continue;
    used.add(found.run);
    const f = found.value;
    rows.push([
      label,
      found.run,
      int(f.rate),
      int(f.cpuUsPerReq.raw),
      int(f.cpuUsPerReq.floor),
      int(f.cpuUsPerReq.service),
      ratio(f.serviceVsFloor),
      int(f.postgresUsPerReq),
      int(f.redisUsPerReq),
      `${ms(f.p99Ms.service)} (${ms(f.p99Ms.raw)})`,
    ]);
  }
  return table(
    [
      'Scenario',
      'run',
      'rate',
      'raw',
      'floor',
      'service',
      'service vs floor',
      'PostgreSQL',
      'Redis',
      'p99 ms, service (raw)',
    ],
    rows,
  );
}

/**
 * Each target's row: `pick` reads the figure from a run, `value` the number compared with the
 * target (`at most` or `at least`), `text` what the table shows.
 */
const TARGETS = [
  ...[
    ['listPets', 'listPets, one key: CPU per request vs the floor'],
    ['listPetsManyKeys', 'listPets, 2,000 keys: CPU per request vs the floor'],
  ].map(([scenario, label]) => ({
    label,
    target: `${scenario}CpuVsFloorAtFixedRate`,
    atMost: true,
    pick: (r) => r.fixedRate?.[scenario]?.serviceVsFloor,
  })),
  ...['listPets', 'listPetsManyKeys', 'getPet', 'createPetIdempotent'].map((scenario) => ({
    label: `p99 at the fixed rate vs raw's: ${scenario}`,
    target: 'p99VsRawAtFixedRate',
    atMost: true,
    pick: (r) => r.fixedRate?.[scenario]?.p99Ms,
    value: (p99) => p99.service / p99.raw,
  })),
  ...CAPACITY.map(([key, label]) => ({ label, target: key, pick: (r) => r[key] })),
  ...[
    ['agedFiltersVsAgedUnfiltered', 'aged filtered lists vs the aged unfiltered list, lowest'],
    ['agedFiltersVsSame10kRows', 'aged filtered lists vs the same on 10,000 rows, lowest'],
  ].map(([key, label]) => ({
    label,
    target: key,
    pick: (r) => r[key],
    value: (aged) => aged.lowest,
    text: (aged) => `${ratio(aged.lowest)} (${aged.met} of ${aged.of} met)`,
  })),
  {
    label: "RSS after each scenario vs raw's, highest",
    target: 'rssVsRawMax',
    atMost: true,
    pick: (r) => r.rssVsRawMax,
  },
  { label: 'service vs the peer, lowest', target: 'serviceVsPeerMin', pick: (r) => r.serviceVsPeerMin },
  ...[
    ['postgres', 'PostgreSQL'],
    ['embedded', 'embedded'],
  ].map(([database, name]) => ({
    label: `start to ready, ${name}`,
    target: 'startToReadyMs',
    atMost: true,
    pick: (r) => r.startToReadyMs?.[database],
    text: (ms) => `${int(ms)} ms`,
    bound: (ms) => `${int(ms)} ms`,
  })),
  {
    label: 'soak: RSS at the end vs minute one (`BENCH_SOAK=1`)',
    target: 'soakRssEndVsMinuteOnePct',
    atMost: true,
    pick: (r) => r.soakRssEndVsMinuteOnePct,
    text: (pct) => `+${pct}%`,
    bound: (pct) => `+${pct}%`,
  },
];

function targetTable(history, used) {
  const rows = [];
  for (const t of TARGETS) {
    const target = history.targets[t.target];
    const found = newest(history.runs, t.pick);
    if (target === undefined || !found) continue;
    used.add(found.run);
    const value = t.value ? t.value(found.value) : found.value;
    const met = t.atMost ? value <= target : value >= target;
    const bound = `${t.atMost ? '≤' : '≥'} ${(t.bound ?? ratio)(target)}`;
    rows.push([t.label, bound, bold(t.text ? t.text(found.value) : ratio(value), met), found.run]);
  }
  return table(['Target', 'target', 'result', 'run'], rows);
}

/** The runs the section's figures come from, newest first, with what each measured. */
function runList(history, used) {
  return history.runs
    .filter((r) => used.has(r.run))
    .reverse()
    .map(
      (r) =>
        `- Run ${r.run}${r.date ? ` (${r.date})` : ''}: ${r.service}; load average ${r.loadAverageBefore.toFixed(1)} before.${r.command ? ` \`${r.command}\`` : ''}`,
    )
    .join('\n');
}

/** The section's Markdown, between the markers, from history.json's contents. */
export function latestResult(history) {
  const used = new Set();
  const fixed = fixedRateTable(history.runs, used);
  const targets = targetTable(history, used);
  return [
    START,
    '<!-- Generated by `npm run bench:docs` from bench/results/history.json; edit that file, not this section. -->',
    '',
    'Each figure is from the newest run in [history.json](../bench/results/history.json) that',
    'measured it; in bold, a target met. The p99 ratios are computed from the rounded p99s.',
    '',
    runList(history, used),
    '',
    "At the fixed rate (half the service's capacity), CPU µs per request of each process:",
    '',
    fixed,
    '',
    targets,
    END,
  ].join('\n');
}

/** `page` with its section between the markers replaced by `section`. */
export function withSection(page, section) {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/performance.md: no ${START} … ${END} section`);
  return page.slice(0, start) + section + page.slice(end + END.length);
}

/** The page as `npm run bench:docs` would write it. */
export function generatedPage(page = readFileSync(PAGE, 'utf8'), history = JSON.parse(readFileSync(HISTORY, 'utf8'))) {
  return withSection(page, latestResult(history));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = readFileSync(PAGE, 'utf8');
  const generated = generatedPage(page);
  if (process.argv.includes('--check')) {
    if (generated !== page) {
      console.error(
        'docs/performance.md: "Latest result" differs from bench/results/history.json; run npm run bench:docs',
      );
      process.exit(1);
    }
  } else if (generated !== page) {
    writeFileSync(PAGE, generated);
    console.log('docs/performance.md: "Latest result" rewritten from bench/results/history.json');
  }
}
