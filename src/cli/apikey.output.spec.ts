import { ApiKeyInputError } from '../api-keys/api-key-input.js';
import type { ApiKeyInfo } from '../api-keys/api-keys.service.js';
import { DataDirLockedError } from '../database/data-dir-lock.js';
import { NoSuchKeyError, type Outcome } from './apikey.operations.js';
import { explainFailure, explainOpenFailure, render } from './apikey.output.js';

const created = new Date('2026-01-02T03:04:05.000Z');
const used = new Date('2026-01-03T00:00:00.000Z');
const revoked = new Date('2026-01-04T00:00:00.000Z');
const free: ApiKeyInfo = {
  id: 1n,
  name: 'CI',
  plan: 'free',
  perMinute: 60,
  perDay: 1000,
  prefix: 'ask_AbCdEfGh',
  createdAt: created,
  lastUsedAt: null,
  revokedAt: null,
  expiresAt: null,
  previousExpiresAt: null,
  scopes: ['pets:read', 'pets:write'],
  leakedAt: null,
};
const big: ApiKeyInfo = {
  ...free,
  id: 12n,
  name: 'Élan',
  plan: 'enterprise',
  perMinute: 5000,
  perDay: 1_000_000,
  lastUsedAt: used,
  revokedAt: revoked,
  scopes: ['pets:read'],
};
const freeJson = {
  id: 1,
  name: 'CI',
  plan: 'free',
  perMinute: 60,
  perDay: 1000,
  prefix: 'ask_AbCdEfGh',
  createdAt: '2026-01-02T03:04:05.000Z',
  lastUsedAt: null,
  revokedAt: null,
  expiresAt: null,
  previousSecretExpiresAt: null,
  scopes: ['pets:read', 'pets:write'],
  leakedAt: null,
  state: 'active',
};
const now = new Date('2026-01-05T00:00:00.000Z');

describe('apikey tool output', () => {
  it('shows a new key once, in text or as one JSON line', () => {
    expect(render({ kind: 'create', info: free, key: 'ask_secret' }, false)).toBe(
      'Issued API key 1 "CI" (plan free: 60/minute, 1000/day; scopes pets:read,pets:write).\nThe key is shown only now; store it safely:\n\nask_secret\n\n',
    );
    expect(render({ kind: 'create', info: free, key: 'ask_secret' }, true)).toBe(
      `${JSON.stringify({ ...freeJson, key: 'ask_secret' })}\n`,
    );
  });

  it('lists keys as a table aligned by characters, or says there are none', () => {
    expect(render({ kind: 'list', keys: [], now }, false)).toBe('No API keys.\n');
    expect(render({ kind: 'list', keys: [], now }, true)).toBe('[]\n');
    expect(render({ kind: 'list', keys: [free, big], now }, false)).toBe(
      [
        'ID  NAME  PLAN        PER_MINUTE  PER_DAY  SCOPES                PREFIX         CREATED                   LAST_USED                 STATE',
        '1   CI    free        60          1000     pets:read,pets:write  ask_AbCdEfGh…  2026-01-02T03:04:05.000Z  -                         active',
        '12  Élan  enterprise  5000        1000000  pets:read             ask_AbCdEfGh…  2026-01-02T03:04:05.000Z  2026-01-03T00:00:00.000Z  revoked 2026-01-04T00:00:00.000Z',
      ].join('\n') + '\n',
    );
    const [, second] = JSON.parse(render({ kind: 'list', keys: [free, big], now }, true)) as Record<string, unknown>[];
    expect(second).toMatchObject({
      id: 12,
      lastUsedAt: '2026-01-03T00:00:00.000Z',
      revokedAt: '2026-01-04T00:00:00.000Z',
      state: 'revoked',
    });
  });

  it("lists each key's state: expiring within 7 days, expired, and a rolled key's old secret in its overlap", () => {
    const expiring = {
      ...free,
      id: 2n,
      expiresAt: new Date('2026-01-10T00:00:00.000Z'),
      previousExpiresAt: new Date('2026-01-06T00:00:00.000Z'),
    };
    const expired = { ...free, id: 3n, expiresAt: new Date('2026-01-04T00:00:00.000Z') };
    const later = {
      ...free,
      id: 4n,
      expiresAt: new Date('2026-03-01T00:00:00.000Z'),
      previousExpiresAt: new Date('2026-01-01T00:00:00.000Z'),
    };
    const text = render({ kind: 'list', keys: [expiring, expired, later], now }, false).split('\n');
    expect(text[1]).toMatch(/ expiring until 2026-01-10T00:00:00.000Z; old secret until 2026-01-06T00:00:00.000Z$/);
    expect(text[2]).toMatch(/ expired 2026-01-04T00:00:00.000Z$/);
    expect(text[3]).toMatch(/ active until 2026-03-01T00:00:00.000Z$/);
    const json = JSON.parse(render({ kind: 'list', keys: [expiring, expired, later], now }, true)) as Record<
      string,
      unknown
    >[];
    expect(json.map((k) => k.state)).toEqual(['expiring', 'expired', 'active']);
    expect(json[0]).toMatchObject({
      expiresAt: '2026-01-10T00:00:00.000Z',
      previousSecretExpiresAt: '2026-01-06T00:00:00.000Z',
    });
  });

  it('shows when a leak of a key was reported, in its state and as leakedAt', () => {
    const leaked = { ...free, id: 5n, revokedAt: revoked, leakedAt: revoked };
    const notified = { ...free, id: 6n, leakedAt: revoked };
    const text = render({ kind: 'list', keys: [leaked, notified], now }, false).split('\n');
    expect(text[1]).toMatch(/ revoked 2026-01-04T00:00:00.000Z; leaked 2026-01-04T00:00:00.000Z$/);
    expect(text[2]).toMatch(/ active; leaked 2026-01-04T00:00:00.000Z$/);
    const json = JSON.parse(render({ kind: 'list', keys: [leaked, notified], now }, true)) as Record<string, unknown>[];
    expect(json.map((k) => [k.state, k.leakedAt])).toEqual([
      ['revoked', '2026-01-04T00:00:00.000Z'],
      ['active', '2026-01-04T00:00:00.000Z'],
    ]);
  });

  it("shows a rolled key's new secret once, and until when the old one works", () => {
    const rolled = { ...free, previousExpiresAt: new Date('2026-01-06T00:00:00.000Z') };
    expect(render({ kind: 'roll', info: rolled, key: 'ask2_new' }, false)).toBe(
      'Rolled API key 1 "CI" (plan free: 60/minute, 1000/day; scopes pets:read,pets:write). The old secret keeps working until 2026-01-06T00:00:00.000Z.\nThe new secret is shown only now; store it safely:\n\nask2_new\n\n',
    );
    expect(render({ kind: 'roll', info: free, key: 'ask2_new' }, false)).toContain('The old secret no longer works.');
  });

  it('tells a revocation from a repeated one', () => {
    expect(render({ kind: 'revoke', info: { ...free, revokedAt: revoked }, alreadyRevoked: false }, false)).toBe(
      'Revoked API key 1 "CI" (plan free: 60/minute, 1000/day; scopes pets:read,pets:write); every instance refuses it within seconds.\n',
    );
    expect(render({ kind: 'revoke', info: { ...free, revokedAt: revoked }, alreadyRevoked: true }, false)).toBe(
      'API key 1 "CI" (plan free: 60/minute, 1000/day; scopes pets:read,pets:write) was already revoked (2026-01-04T00:00:00.000Z).\n',
    );
    expect(JSON.parse(render({ kind: 'revoke', info: free, alreadyRevoked: true }, true))).toEqual({
      ...freeJson,
      alreadyRevoked: true,
    });
  });

  it('confirms new scopes', () => {
    const reader = { ...free, scopes: ['pets:read' as const] };
    expect(render({ kind: 'set-scopes', info: reader }, false)).toBe(
      'API key 1 "CI" (plan free: 60/minute, 1000/day; scopes pets:read) updated.\n',
    );
    expect(JSON.parse(render({ kind: 'set-scopes', info: reader }, true))).toEqual({
      ...freeJson,
      scopes: ['pets:read'],
    });
  });

  it('confirms a new plan', () => {
    expect(render({ kind: 'set-plan', info: free }, false)).toBe(
      'API key 1 "CI" (plan free: 60/minute, 1000/day; scopes pets:read,pets:write) updated.\n',
    );
    expect(render({ kind: 'set-plan', info: free }, true)).toBe(`${JSON.stringify(freeJson)}\n`);
  });

  it("shows a key's usage as a table with its totals, or as the JSON array of periods, or says there is none", () => {
    const query = {
      from: new Date('2026-11-27T00:00:00Z'),
      to: new Date('2026-11-28T00:00:00Z'),
      granularity: 'hour' as const,
    };
    const periods = [
      { period: '2026-11-27T06:00:00.000Z', requests: 1234, limited: 0 },
      { period: '2026-11-27T07:00:00.000Z', requests: 5, limited: 3 },
    ];
    expect(render({ kind: 'usage', id: 7n, query, periods }, false)).toBe(
      [
        'HOUR                      REQUESTS  LIMITED',
        '2026-11-27T06:00:00.000Z      1234        0',
        '2026-11-27T07:00:00.000Z         5        3',
        'API key 7 from 2026-11-27T00:00:00.000Z to 2026-11-28T00:00:00.000Z: 1239 requests, 3 of them answered 429.',
        '',
      ].join('\n'),
    );
    expect(render({ kind: 'usage', id: 7n, query, periods }, true)).toBe(`${JSON.stringify(periods)}\n`);
    expect(render({ kind: 'usage', id: 7n, query, periods: [] }, false)).toBe(
      'No requests counted against API key 7 from 2026-11-27T00:00:00.000Z to 2026-11-28T00:00:00.000Z.\n',
    );
    expect(render({ kind: 'usage', id: 7n, query, periods: [] }, true)).toBe('[]\n');
  });

  it('never prints a stored name’s control or bidirectional characters raw, in text or JSON', () => {
    const unsafe = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
    const old = { ...free, name: 'Acme\u202Egnp.exe\u001b[2J\u0085\u2028x' };
    const token = {
      id: 4n,
      name: 'ops\u202E\u009B',
      prefix: 'asadm_AbCdEfGh',
      createdAt: created,
      lastUsedAt: null,
      revokedAt: null,
    };
    const outcomes = [
      { kind: 'list', keys: [old], now },
      { kind: 'update', info: old },
      { kind: 'revoke', info: old, alreadyRevoked: false },
      { kind: 'admin-list', tokens: [token] },
      { kind: 'admin-revoke', info: token, alreadyRevoked: true },
    ] satisfies Outcome[];
    for (const outcome of outcomes) {
      const text = render(outcome, false);
      expect(text.trimEnd().replace(/\n/g, '')).not.toMatch(unsafe);
      expect(text).toMatch(/(Acme\\u202Egnp\.exe\\u001B\[2J\\u0085\\u2028x|ops\\u202E\\u009B)/);
      const json = render(outcome, true);
      expect(json.trimEnd()).not.toMatch(unsafe);
      expect(JSON.stringify(JSON.parse(json))).toContain(
        JSON.stringify(outcome.kind.startsWith('admin') ? token.name : old.name).slice(1, -1),
      );
    }
  });

  it('explains failures in the user’s terms', () => {
    expect(explainFailure(new NoSuchKeyError(7n))).toBe('no API key has id 7');
    expect(explainFailure(new ApiKeyInputError('API key 3 is revoked; issue a new key instead'))).toBe(
      'API key 3 is revoked; issue a new key instead',
    );
    expect(explainFailure(Object.assign(new Error('missing'), { code: 'P2021' }))).toBe(
      'a table of the key tool does not exist: apply the migrations first (npm run db:migrate)',
    );
    expect(explainFailure(new Error('boom'))).toBe('failed: boom');
    expect(explainOpenFailure(new DataDirLockedError('DATA_DIR is in use'))).toBe('DATA_DIR is in use');
    expect(explainOpenFailure(new Error('ENOENT'))).toBe('cannot open the database: ENOENT');
  });
});
