import { Controller, Get, Inject, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AdminSessionsService } from '../../admin-sessions/admin-sessions.service.js';
import { ApiKeyInputError } from '../../api-keys/api-key-input.js';
import {
  ApiKeysService,
  KEY_STATES,
  keyState,
  type ApiKeyInfo,
  type ApiKeyState,
} from '../../api-keys/api-keys.service.js';
import { PLANS, type Plan } from '../../api-keys/plans.js';
import { AUDIT_ACTIONS, type Actor, type AuditAction } from '../../audit/audit.js';
import { AuditLogService } from '../../audit/audit-log.service.js';
import { adminConfig, type AdminConfig } from '../../config/admin.config.js';
import { ApiError } from '../../errors/api-error.js';
import { parsePositiveInt64 } from '../../json/int64.js';
import { Clock } from '../../time/clock.js';
import { USAGE_OPERATIONS } from '../../usage/usage-counts.js';
import { periodsOf } from '../../usage/usage-query.js';
import { UsageService, type UsageOperationPeriod, type UsagePeriod } from '../../usage/usage.service.js';
import { AdminActor, AdminPublic } from '../admin-auth.guard.js';
import { adminPage, encodeAdminCursor } from '../admin-paging.js';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS } from '../dto/key-input.dto.js';
import { keyChangeOf, keyFormValues, type KeyFormValues } from './console-form.js';
import { CONSOLE_PATH, SIGN_IN_PATH } from './console-paths.js';
import {
  ConsoleSessionGuard,
  cookieOf,
  secureCookie,
  SESSION_COOKIE,
  sessionCookie,
  SignInRedirectFilter,
} from './console-session.guard.js';
import { sendHtml } from './console-sign-in.controller.js';
import {
  auditTable,
  count,
  figureTable,
  keyFields,
  keyRecordTable,
  page,
  secretBlock,
  select,
  share,
  STATE_LABELS,
  when,
} from './console-views.js';
import { FormBody } from './form-body.interceptor.js';
import { markup, type Html } from './html.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Rows per page of the keys and audit lists. */
const PAGE_SIZE = 50;

type FormRequest = Request & { body: URLSearchParams };

/** Notices shown after a change (the page it redirects to names one). */
const DONE: Record<string, string> = {
  saved: 'Saved.',
  revoked: 'The key is revoked: every instance refuses it within 5 seconds.',
};

function keyIdOf(raw: string): bigint {
  const id = parsePositiveInt64(raw);
  if (id === null) throw new ApiError('not_found', `No API key has id ${raw}.`);
  return id;
}

/** An optional query parameter given once, or undefined. */
function one(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The sums of a list of periods. */
function sum(periods: readonly UsagePeriod[]): { requests: number; limited: number } {
  return periods.reduce((t, p) => ({ requests: t.requests + p.requests, limited: t.limited + p.limited }), {
    requests: 0,
    limited: 0,
  });
}

/** The columns of a key's usage tables. */
const KEY_USAGE_COLUMNS = ['Requests', 'Refused 429', ...USAGE_OPERATIONS];

/** A key's rows per period and operation as one row per period: requests, 429s, then each operation's requests. */
function byPeriod(rows: readonly UsageOperationPeriod[]): { period: string; values: number[] }[] {
  const periods = new Map<string, number[]>();
  for (const r of rows) {
    const values = periods.get(r.period) ?? KEY_USAGE_COLUMNS.map(() => 0);
    values[0] += r.requests;
    values[1] += r.limited;
    values[2 + USAGE_OPERATIONS.indexOf(r.operation)] += r.requests;
    periods.set(r.period, values);
  }
  return [...periods].map(([period, values]) => ({ period, values }));
}

function figure(label: string, value: string): Html {
  return markup`<div class="figure">${label}<strong>${value}</strong></div>\n`;
}

function notice(text: string | undefined): Html | null {
  return text === undefined ? null : markup`<p class="notice" role="status">${text}</p>`;
}

function errorNotice(text: string | undefined): Html | null {
  return text === undefined ? null : markup`<p class="error" role="alert">${text}</p>`;
}

/**
 * The operator console's pages (docs/admin-console.md): server-rendered HTML with plain forms,
 * over the admin API's own services, so the same checks and audit entries apply. Every route
 * needs a session (ConsoleSessionGuard); a change is made with the session's admin token as actor.
 */
@ApiExcludeController()
@AdminPublic()
@UseGuards(ConsoleSessionGuard)
@UseFilters(SignInRedirectFilter)
@Controller(CONSOLE_PATH)
export class ConsoleController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly usage: UsageService,
    private readonly audit: AuditLogService,
    private readonly sessions: AdminSessionsService,
    private readonly clock: Clock,
    @Inject(adminConfig.token) private readonly config: AdminConfig,
  ) {}

  @Get()
  async overview(@AdminActor() actor: Actor, @Res() res: Response): Promise<void> {
    const now = this.clock.now();
    const weekAgo = new Date(now.getTime() - 7 * DAY_MS);
    const [hourly, states, top] = await Promise.all([
      this.usage.totals(periodsOf(weekAgo, now, 'hour')),
      this.keys.countByState(),
      this.usage.topKeys(weekAgo, now, 10),
    ]);
    // The hours that overlap the last 24 hours.
    const dayStart = now.getTime() - DAY_MS;
    const lastDay = sum(hourly.filter((p) => Date.parse(p.period) + HOUR_MS > dayStart));
    const week = sum(hourly);
    const stateRows = KEY_STATES.map(
      (s) =>
        markup`<tr><th scope="row"><a href="/admin/keys?state=${s}">${STATE_LABELS[s]}</a></th><td class="num">${count(states[s])}</td></tr>\n`,
    );
    const topRows = top.map(
      (k) =>
        markup`<tr><td><a href="/admin/keys/${k.keyId}">${k.name}</a></td><td class="num">${count(k.requests)}</td><td class="num">${share(k.limited, k.requests)}</td></tr>\n`,
    );
    const topTable =
      top.length === 0
        ? markup`<p>No requests in the last 7 days.</p>`
        : markup`<table>
<caption>The 10 keys with the most requests over the last 7 days</caption>
<thead><tr><th scope="col">Key</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Refused 429</th></tr></thead>
<tbody>
${topRows}</tbody>
</table>`;
    const body = markup`<h2>Requests</h2>
<div class="figures">
${figure('Requests, last 24 hours', count(lastDay.requests))}${figure('Refused 429, last 24 hours', count(lastDay.limited))}${figure('Requests, last 7 days', count(week.requests))}${figure('Refused 429, last 7 days', count(week.limited))}</div>
<h2>Keys by state</h2>
<table>
<caption>Keys by state</caption>
<tbody>
${stateRows}</tbody>
</table>
<h2>Busiest keys, last 7 days</h2>
${topTable}
<h2>Requests per hour, last 7 days</h2>
${figureTable({
  id: 'usage-hourly',
  caption: 'Requests and 429s per hour over the last 7 days (hours with requests)',
  chartLabel: 'Usage of all keys: requests and 429s per hour over the last 7 days',
  columns: ['Requests', 'Refused 429'],
  rows: hourly.map((p) => ({ period: p.period, values: [p.requests, p.limited] })),
  range: { from: weekAgo, to: now },
})}`;
    sendHtml(res, 200, page({ title: 'Overview', signedInAs: this.name(actor), charts: true }, body));
  }

  @Get('keys')
  async keyList(
    @Query() query: Record<string, unknown>,
    @AdminActor() actor: Actor,
    @Res() res: Response,
  ): Promise<void> {
    const search = one(query.search)?.trim() || undefined;
    const planText = one(query.plan);
    const stateText = one(query.state);
    const plan = (PLANS as readonly string[]).includes(planText ?? '') ? (planText as Plan) : undefined;
    const state = (KEY_STATES as readonly string[]).includes(stateText ?? '') ? (stateText as ApiKeyState) : undefined;
    const { from } = adminPage({ cursor: one(query.cursor) });
    const { keys, nextAfter } = await this.keys.page(PAGE_SIZE, from, { search, plan, state });
    const now = this.clock.now();
    const totals = await this.usage.keyTotals(
      keys.map((k) => k.id),
      new Date(now.getTime() - 7 * DAY_MS),
      now,
    );
    const next = new URLSearchParams();
    if (search !== undefined) next.set('search', search);
    if (plan !== undefined) next.set('plan', plan);
    if (state !== undefined) next.set('state', state);
    if (nextAfter !== null) next.set('cursor', encodeAdminCursor(nextAfter));
    const rows = keys.map(
      (k) =>
        markup`<tr><td><a href="/admin/keys/${k.id}">${k.name}</a></td><td>${k.plan}</td><td>${keyState(k, now)}</td><td>${k.scopes.join(', ')}</td><td>${when(k.lastUsedAt)}</td><td class="num">${count(totals.get(k.id)?.requests ?? 0)}</td></tr>\n`,
    );
    const table =
      keys.length === 0
        ? markup`<p>No key matches.</p>`
        : markup`<table>
<caption>Keys${from === undefined ? null : ' (continued)'}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Plan</th><th scope="col">State</th><th scope="col">Scopes</th><th scope="col">Last used</th><th scope="col" class="num">Requests, 7 days</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`;
    const body = markup`<form method="get" action="/admin/keys" role="search">
<label for="search">Name or key’s first characters</label> <input id="search" name="search" type="text" value="${search ?? ''}">
<label for="plan">Plan</label> ${select('plan', 'plan', PLANS, plan, 'any')}
<label for="state">State</label> ${select('state', 'state', KEY_STATES, state, 'any')}
<button type="submit">Filter</button>
</form>
${table}
${nextAfter === null ? null : markup`<p><a href="/admin/keys?${next.toString()}" rel="next">Next page</a></p>`}
<p><a href="/admin/keys/new">Issue a key</a></p>`;
    sendHtml(res, 200, page({ title: 'Keys', signedInAs: this.name(actor) }, body));
  }

  @Get('keys/new')
  newKey(@AdminActor() actor: Actor, @Res() res: Response): void {
    sendHtml(res, 200, this.newKeyPage(actor));
  }

  @Post('keys/new')
  @FormBody()
  async issue(@Req() req: FormRequest, @AdminActor() actor: Actor, @Res() res: Response): Promise<void> {
    const values = keyFormValues(req.body);
    try {
      const change = keyChangeOf(values);
      const { info, key } = await this.keys.create(
        {
          name: change.name,
          plan: change.plan as Plan, // checked by the service
          perMinute: change.perMinute,
          perDay: change.perDay,
          expiresAt: change.expiresAt,
          scopes: change.scopes,
        },
        actor,
      );
      const body = markup`${secretBlock(key)}
${keyRecordTable(info, keyState(info, this.clock.now()))}
<p><a href="/admin/keys/${info.id}">Open the key’s page</a> · <a href="/admin/keys/new">Issue another key</a></p>`;
      sendHtml(res, 201, page({ title: `Key “${info.name}” issued`, signedInAs: this.name(actor) }, body));
    } catch (err) {
      if (!(err instanceof ApiKeyInputError)) throw err;
      sendHtml(res, 400, this.newKeyPage(actor, values, err.message));
    }
  }

  @Get('keys/:id')
  async key(
    @Param('id') raw: string,
    @Query('done') done: unknown,
    @AdminActor() actor: Actor,
    @Res() res: Response,
  ): Promise<void> {
    const info = await this.keyOrNotFound(raw);
    const shown = typeof done === 'string' ? DONE[done] : undefined;
    sendHtml(res, 200, await this.keyPage(info, actor, { notice: shown }));
  }

  @Post('keys/:id/save')
  @FormBody()
  async save(
    @Param('id') raw: string,
    @Req() req: FormRequest,
    @AdminActor() actor: Actor,
    @Res() res: Response,
  ): Promise<void> {
    const info = await this.keyOrNotFound(raw);
    const values = keyFormValues(req.body);
    try {
      const changed = await this.keys.update(info.id, keyChangeOf(values), actor);
      if (changed === null) throw new ApiError('not_found', `No API key has id ${info.id}.`);
    } catch (err) {
      if (!(err instanceof ApiKeyInputError)) throw err;
      return sendHtml(res, 400, await this.keyPage(info, actor, { error: err.message, values }));
    }
    res.redirect(303, `/admin/keys/${info.id}?done=saved`);
  }

  @Post('keys/:id/roll')
  @FormBody()
  async roll(
    @Param('id') raw: string,
    @Req() req: FormRequest,
    @AdminActor() actor: Actor,
    @Res() res: Response,
  ): Promise<void> {
    const info = await this.keyOrNotFound(raw);
    const text = (req.body.get('overlapSeconds') ?? '').trim();
    const overlap = text === '' ? DEFAULT_OVERLAP_SECONDS : /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
    if (!(overlap >= 0 && overlap <= MAX_OVERLAP_SECONDS)) {
      const error = `The overlap must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS}.`;
      return sendHtml(res, 400, await this.keyPage(info, actor, { error }));
    }
    try {
      const rolled = await this.keys.roll(info.id, overlap * 1000, actor);
      if (rolled === null) throw new ApiError('not_found', `No API key has id ${info.id}.`);
      sendHtml(res, 200, await this.keyPage(rolled.info, actor, { secret: rolled.key }));
    } catch (err) {
      if (!(err instanceof ApiKeyInputError)) throw err;
      sendHtml(res, 400, await this.keyPage(info, actor, { error: err.message }));
    }
  }

  @Post('keys/:id/revoke')
  @FormBody()
  async revoke(
    @Param('id') raw: string,
    @Req() req: FormRequest,
    @AdminActor() actor: Actor,
    @Res() res: Response,
  ): Promise<void> {
    const info = await this.keyOrNotFound(raw);
    if (req.body.get('confirm') !== 'yes') {
      const error = 'Revoking needs confirmation: tick “Yes, revoke this key” and press Revoke again.';
      return sendHtml(res, 400, await this.keyPage(info, actor, { error }));
    }
    await this.keys.revoke(info.id, actor);
    res.redirect(303, `/admin/keys/${info.id}?done=revoked`);
  }

  @Get('audit')
  async auditLog(
    @Query() query: Record<string, unknown>,
    @AdminActor() actor: Actor,
    @Res() res: Response,
  ): Promise<void> {
    const actorFilter = one(query.actor)?.trim() || undefined;
    const actionText = one(query.action);
    const action = (AUDIT_ACTIONS as readonly string[]).includes(actionText ?? '')
      ? (actionText as AuditAction)
      : undefined;
    const keyText = one(query.keyId)?.trim();
    const keyId = keyText === undefined ? undefined : (parsePositiveInt64(keyText) ?? undefined);
    const { from } = adminPage({ cursor: one(query.cursor) });
    const { entries, nextBefore } = await this.audit.page(PAGE_SIZE, from, { actor: actorFilter, action, keyId });
    const next = new URLSearchParams();
    if (actorFilter !== undefined) next.set('actor', actorFilter);
    if (action !== undefined) next.set('action', action);
    if (keyId !== undefined) next.set('keyId', keyId.toString());
    if (nextBefore !== null) next.set('cursor', encodeAdminCursor(nextBefore));
    const badKey =
      keyText !== undefined && keyId === undefined ? 'The key id must be a whole number from 1.' : undefined;
    const body = markup`<form method="get" action="/admin/audit" role="search">
<label for="actor">Actor</label> <input id="actor" name="actor" type="text" value="${actorFilter ?? ''}">
<label for="action">Action</label> ${select('action', 'action', AUDIT_ACTIONS, action, 'any')}
<label for="keyId">Key id</label> <input id="keyId" name="keyId" type="text" inputmode="numeric" size="8" value="${keyText ?? ''}">
<button type="submit">Filter</button>
</form>
${errorNotice(badKey)}
${auditTable(entries, 'Audit entries, newest first')}
${nextBefore === null ? null : markup`<p><a href="/admin/audit?${next.toString()}" rel="next">Older entries</a></p>`}`;
    sendHtml(res, 200, page({ title: 'Audit log', signedInAs: this.name(actor) }, body));
  }

  @Post('sign-out')
  async signOut(@Req() req: Request, @Res() res: Response): Promise<void> {
    const id = cookieOf(req, SESSION_COOKIE);
    if (id !== undefined) await this.sessions.end(id);
    res.setHeader('Set-Cookie', sessionCookie('', 0, secureCookie(this.config, req)));
    res.redirect(303, SIGN_IN_PATH);
  }

  private name(actor: Actor): string {
    return actor.kind === 'admin_token' ? actor.name : '';
  }

  private async keyOrNotFound(raw: string): Promise<ApiKeyInfo> {
    const id = keyIdOf(raw);
    const info = await this.keys.get(id);
    if (info === null) throw new ApiError('not_found', `No API key has id ${id}.`);
    return info;
  }

  private newKeyPage(actor: Actor, values: Partial<KeyFormValues> = {}, error?: string): Html {
    const body = markup`${errorNotice(error)}
<form method="post" action="/admin/keys/new">
${keyFields(values)}
<p><button type="submit">Issue the key</button></p>
</form>`;
    return page({ title: 'Issue a key', signedInAs: this.name(actor) }, body);
  }

  private async keyPage(
    info: ApiKeyInfo,
    actor: Actor,
    shown: { notice?: string; error?: string; secret?: string; values?: KeyFormValues },
  ): Promise<Html> {
    const now = this.clock.now();
    const state = keyState(info, now);
    const week = { from: new Date(now.getTime() - 7 * DAY_MS), to: now };
    const ninetyDays = { from: new Date(now.getTime() - 90 * DAY_MS), to: now };
    const [hourly, daily, entries] = await Promise.all([
      this.usage.usageByOperation(info.id, periodsOf(week.from, now, 'hour')),
      this.usage.usageByOperation(info.id, periodsOf(ninetyDays.from, now, 'day')),
      this.audit.page(20, undefined, { keyId: info.id }),
    ]);
    const body = markup`${notice(shown.notice)}
${errorNotice(shown.error)}
${shown.secret === undefined ? null : secretBlock(shown.secret)}
${keyRecordTable(info, state)}
<h2>Usage per hour, last 7 days</h2>
${figureTable({
  id: 'usage-hourly',
  caption: 'Requests, 429s and requests by operation per hour over the last 7 days (hours with requests)',
  chartLabel: `Usage of key ${info.name}: requests, 429s and operations per hour over the last 7 days`,
  columns: KEY_USAGE_COLUMNS,
  rows: byPeriod(hourly ?? []),
  range: week,
})}
<h2>Usage per day, last 90 days</h2>
${figureTable({
  id: 'usage-daily',
  caption: 'Requests, 429s and requests by operation per day over the last 90 days (days with requests)',
  chartLabel: `Usage of key ${info.name}: requests, 429s and operations per day over the last 90 days`,
  columns: KEY_USAGE_COLUMNS,
  rows: byPeriod(daily ?? []),
  daily: true,
  range: ninetyDays,
})}
${state === 'revoked' || state === 'expired' ? markup`<p>This key is ${state}: it takes no change.</p>` : this.keyActions(info, shown.values)}
<h2>Audit entries</h2>
${auditTable(entries.entries, 'The latest changes to this key, newest first')}
<p><a href="/admin/audit?keyId=${info.id}">All of this key’s audit entries</a></p>`;
    return page({ title: `Key “${info.name}”`, signedInAs: this.name(actor), charts: true }, body);
  }

  /** The forms of a live key: Save, Roll, Revoke (which asks for confirmation). */
  private keyActions(info: ApiKeyInfo, typed: KeyFormValues | undefined): Html {
    const values: Partial<KeyFormValues> = typed ?? {
      name: info.name,
      plan: info.plan,
      perMinute: info.plan === 'enterprise' ? String(info.perMinute) : '',
      perDay: info.plan === 'enterprise' ? String(info.perDay) : '',
      expiresAt: info.expiresAt?.toISOString() ?? '',
      scopes: info.scopes,
    };
    const confirm = `Revoke the key ${info.name}? Every request with it is refused from now on; this cannot be undone.`;
    return markup`<h2>Change</h2>
<form method="post" action="/admin/keys/${info.id}/save">
${keyFields(values)}
<p><button type="submit">Save</button></p>
</form>
<h2>Roll</h2>
<form method="post" action="/admin/keys/${info.id}/roll">
<p>The key gets a new secret, shown once; the current one keeps working for the overlap.</p>
<p><label for="overlapSeconds">Overlap, in seconds</label> <input id="overlapSeconds" name="overlapSeconds" type="number" min="0" max="${MAX_OVERLAP_SECONDS}" value="${DEFAULT_OVERLAP_SECONDS}"></p>
<p><button type="submit">Roll</button></p>
</form>
<h2>Revoke</h2>
<form method="post" action="/admin/keys/${info.id}/revoke" data-confirm="${confirm}">
<p><label><input type="checkbox" name="confirm" value="yes" required> Yes, revoke this key</label></p>
<p><button type="submit" class="danger">Revoke</button></p>
</form>`;
  }
}
