import type { ApiKeyInfo, ApiKeyState } from '../../api-keys/api-keys.service.js';
import { PLANS } from '../../api-keys/plans.js';
import { SCOPES } from '../../api-keys/scopes.js';
import type { AuditEntry } from '../../audit/audit.js';
import { Html, markup, type HtmlValue } from './html.js';
import { ASSETS_PATH, SIGN_IN_PATH } from './console-paths.js';

/** Who is signed in, shown in the header; undefined on the sign-in page. */
export interface PageOptions {
  title: string;
  signedInAs?: string;
  /** Whether the page draws charts (loads uPlot). */
  charts?: boolean;
}

/** The frame of every console page: its assets (files of this listener only), navigation and main. */
export function page({ title, signedInAs, charts = false }: PageOptions, body: HtmlValue): Html {
  const nav =
    signedInAs === undefined
      ? null
      : markup`<header>
<nav aria-label="Console"><a href="/admin/">Overview</a> <a href="/admin/keys">Keys</a> <a href="/admin/keys/new">Issue a key</a> <a href="/admin/audit">Audit log</a></nav>
<span class="who">Signed in as <strong>${signedInAs}</strong></span>
<form class="inline" method="post" action="/admin/sign-out"><button type="submit">Sign out</button></form>
</header>`;
  const chartAssets = charts
    ? markup`<link rel="stylesheet" href="${ASSETS_PATH}/uPlot.min.css">
<script src="${ASSETS_PATH}/uPlot.iife.min.js" defer></script>`
    : null;
  return markup`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Animal Store console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSETS_PATH}/console.css">
${chartAssets}
<script src="${ASSETS_PATH}/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
${nav}
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

export function signInPage(next: string, message?: string): Html {
  const error = message === undefined ? null : markup`<p class="error" role="alert">${message}</p>`;
  return page(
    { title: 'Sign in' },
    markup`${error}
<form method="post" action="${SIGN_IN_PATH}">
<input type="hidden" name="next" value="${next}">
<p><label for="token">Admin token</label><br>
<input id="token" name="token" type="password" autocomplete="current-password" required size="60"></p>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">Admin tokens are issued with the key tool (<code>npm run apikey -- admin create --name …</code>).</p>`,
  );
}

/** A number as an operator reads it: digits grouped. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** The share of refused requests, as a percentage with one decimal. */
export function share(limited: number, requests: number): string {
  return requests === 0 ? '0%' : `${((limited / requests) * 100).toFixed(1).replace(/\.0$/, '')}%`;
}

/** An instant as text (UTC, to the minute), in a <time> element carrying the exact value. */
export function when(at: Date | string | null): Html {
  if (at === null) return markup`<span class="muted">never</span>`;
  const iso = typeof at === 'string' ? at : at.toISOString();
  return markup`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** A table of figures per period (first column: the period), and optionally its chart drawn from it. */
export interface FigureTable {
  id: string;
  caption: string;
  /** The chart's aria-label; starts with "Usage". */
  chartLabel?: string;
  columns: string[];
  rows: { period: string; values: number[] }[];
  /** Periods as days (no time of day). */
  daily?: boolean;
  /** The range the chart spans, periods without requests drawn as zero. */
  range?: { from: Date; to: Date };
}

export function figureTable(t: FigureTable): Html {
  const step = t.daily ? 86_400 : 3_600;
  const span =
    t.range === undefined
      ? null
      : markup` data-from="${t.range.from.getTime() / 1000}" data-to="${t.range.to.getTime() / 1000}" data-step="${step}"`;
  const chart =
    t.chartLabel === undefined
      ? null
      : markup`<div class="chart" role="img" aria-label="${t.chartLabel}" data-table="${t.id}"${span}></div>`;
  const periodText = (period: string) =>
    t.daily ? period.slice(0, 10) : `${period.slice(0, 13).replace('T', ' ')}:00`;
  const rows =
    t.rows.length === 0
      ? markup`<tr><td colspan="${t.columns.length + 1}">No requests in this range.</td></tr>`
      : t.rows.map(
          (r) =>
            markup`<tr><th scope="row"><time datetime="${r.period}">${periodText(r.period)}</time></th>${r.values.map((v) => markup`<td class="num">${count(v)}</td>`)}</tr>\n`,
        );
  const header = t.columns.map((c) => markup`<th scope="col" class="num">${c}</th>`);
  return markup`${chart}
<div class="scroll"><table id="${t.id}">
<caption>${t.caption}</caption>
<thead><tr><th scope="col">${t.daily ? 'Day (UTC)' : 'Hour (UTC)'}</th>${header}</tr></thead>
<tbody>
${rows}</tbody>
</table></div>`;
}

export const STATE_LABELS: Record<ApiKeyState, string> = {
  active: 'active',
  expiring: 'expiring within 7 days',
  expired: 'expired',
  revoked: 'revoked',
};

function option(value: string, selected: boolean, label = value): Html {
  return markup`<option value="${value}"${selected ? markup` selected` : null}>${label}</option>`;
}

/** A select of fixed choices, with an "any" choice when `any` is given. */
export function select(
  name: string,
  id: string,
  values: readonly string[],
  current: string | undefined,
  any?: string,
): Html {
  const anyOption = any === undefined ? null : option('', current === undefined || current === '', any);
  return markup`<select id="${id}" name="${name}">${anyOption}${values.map((v) => option(v, v === current))}</select>`;
}

/** The fields of a key's form (issue, save): name, plan, limits, expiry, scopes. */
export function keyFields(values: {
  name?: string;
  plan?: string;
  perMinute?: string;
  perDay?: string;
  expiresAt?: string;
  scopes?: readonly string[];
}): Html {
  const scopes = values.scopes ?? SCOPES;
  const scopeBoxes = SCOPES.map(
    (s) =>
      markup`<label><input type="checkbox" name="scopes" value="${s}"${scopes.includes(s) ? markup` checked` : null}> ${s}</label>\n`,
  );
  return markup`<p><label for="name">Name</label><br><input id="name" name="name" type="text" required maxlength="100" size="40" value="${values.name ?? ''}"></p>
<p><label for="plan">Plan</label><br>${select('plan', 'plan', PLANS, values.plan ?? 'free')}</p>
<fieldset><legend>Limits (enterprise plan only; the other plans have fixed limits)</legend>
<label for="perMinute">Requests per minute</label> <input id="perMinute" name="perMinute" type="number" min="1" value="${values.perMinute ?? ''}">
<label for="perDay">Requests per day</label> <input id="perDay" name="perDay" type="number" min="1" value="${values.perDay ?? ''}">
</fieldset>
<p><label for="expiresAt">Expires at (UTC, e.g. 2027-01-31T00:00:00Z; empty: never)</label><br><input id="expiresAt" name="expiresAt" type="text" size="30" value="${values.expiresAt ?? ''}"></p>
<fieldset><legend>Scopes</legend>
<input type="hidden" name="scopesGiven" value="1">
${scopeBoxes}</fieldset>`;
}

/** A new secret, shown once, with a copy button (shown by the script). */
export function secretBlock(secret: string): Html {
  return markup`<div class="notice" role="status">
<p><strong>This is the key’s secret. It is shown this once and never again:</strong> copy it now and hand it over safely.</p>
<p><code id="secret" class="secret">${secret}</code> <button type="button" data-copy="secret" hidden>Copy</button></p>
</div>`;
}

export function keyRecordTable(k: ApiKeyInfo, state: ApiKeyState): Html {
  const row = (label: string, value: HtmlValue) => markup`<tr><th scope="row">${label}</th><td>${value}</td></tr>\n`;
  return markup`<table>
<caption>Record</caption>
${row('Id', k.id)}${row('Name', k.name)}${row('Key starts with', markup`<code>${k.prefix}</code>`)}${row('Plan', k.plan)}${row(
    'Limits',
    `${count(k.perMinute)} per minute, ${count(k.perDay)} per day`,
  )}${row('Scopes', k.scopes.join(', ') || 'none')}${row('State', STATE_LABELS[state])}${row('Created', when(k.createdAt))}${row(
    'Last used',
    when(k.lastUsedAt),
  )}${row('Expires', k.expiresAt === null ? 'never' : when(k.expiresAt))}${row(
    'Revoked',
    k.revokedAt === null ? 'no' : when(k.revokedAt),
  )}${k.previousExpiresAt === null ? null : row('Previous secret works until', when(k.previousExpiresAt))}${
    k.leakedAt === null ? null : row('Leak reported', when(k.leakedAt))
  }</table>`;
}

function changesText(entry: AuditEntry): string {
  return Object.entries(entry.changes)
    .map(([field, { before, after }]) => `${field}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`)
    .join('; ');
}

export function auditTable(entries: AuditEntry[], caption: string): Html {
  if (entries.length === 0) return markup`<p>No audit entries.</p>`;
  const rows = entries.map((e) => {
    const key = e.keyId === null ? '' : markup`<a href="/admin/keys/${e.keyId}">${e.keyId}</a>`;
    return markup`<tr><td>${when(e.at)}</td><td>${e.actor}</td><td>${e.action}</td><td>${key}</td><td>${changesText(e)}</td></tr>\n`;
  });
  return markup`<table>
<caption>${caption}</caption>
<thead><tr><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Key</th><th scope="col">Changes</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`;
}
