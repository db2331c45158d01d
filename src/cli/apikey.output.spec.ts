import { ApiKeyInputError, type ApiKeyInfo } from '../auth/api-keys.service.js';
import { DataDirLockedError } from '../database/data-dir-lock.js';
import { NoSuchKeyError } from './apikey.operations.js';
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
};
const big: ApiKeyInfo = { ...free, id: 12n, name: 'Élan', plan: 'enterprise', perMinute: 5000, perDay: 1_000_000, lastUsedAt: used, revokedAt: revoked };
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
};

describe('apikey tool output', () => {
  it('shows a new key once, in text or as one JSON line', () => {
    expect(render({ kind: 'create', info: free, key: 'ask_secret' }, false)).toBe(
      'Issued API key 1 "CI" (plan free: 60/minute, 1000/day).\nThe key is shown only now; store it safely:\n\nask_secret\n\n',
    );
    expect(render({ kind: 'create', info: free, key: 'ask_secret' }, true)).toBe(`${JSON.stringify({ ...freeJson, key: 'ask_secret' })}\n`);
  });

  it('lists keys as a table aligned by characters, or says there are none', () => {
    expect(render({ kind: 'list', keys: [] }, false)).toBe('No API keys.\n');
    expect(render({ kind: 'list', keys: [] }, true)).toBe('[]\n');
    expect(render({ kind: 'list', keys: [free, big] }, false)).toBe(
      [
        'ID  NAME  PLAN        PER_MINUTE  PER_DAY  PREFIX         CREATED                   LAST_USED                 STATUS',
        '1   CI    free        60          1000     ask_AbCdEfGh…  2026-01-02T03:04:05.000Z  -                         active',
        '12  Élan  enterprise  5000        1000000  ask_AbCdEfGh…  2026-01-02T03:04:05.000Z  2026-01-03T00:00:00.000Z  revoked 2026-01-04T00:00:00.000Z',
      ].join('\n') + '\n',
    );
    const [, second] = JSON.parse(render({ kind: 'list', keys: [free, big] }, true)) as Record<string, unknown>[];
    expect(second).toMatchObject({ id: 12, lastUsedAt: '2026-01-03T00:00:00.000Z', revokedAt: '2026-01-04T00:00:00.000Z' });
  });

  it('tells a revocation from a repeated one', () => {
    expect(render({ kind: 'revoke', info: { ...free, revokedAt: revoked }, alreadyRevoked: false }, false)).toBe(
      'Revoked API key 1 "CI" (plan free: 60/minute, 1000/day); every instance refuses it within seconds.\n',
    );
    expect(render({ kind: 'revoke', info: { ...free, revokedAt: revoked }, alreadyRevoked: true }, false)).toBe(
      'API key 1 "CI" (plan free: 60/minute, 1000/day) was already revoked (2026-01-04T00:00:00.000Z).\n',
    );
    expect(JSON.parse(render({ kind: 'revoke', info: free, alreadyRevoked: true }, true))).toEqual({ ...freeJson, alreadyRevoked: true });
  });

  it('confirms a new plan', () => {
    expect(render({ kind: 'set-plan', info: free }, false)).toBe('API key 1 "CI" (plan free: 60/minute, 1000/day) updated.\n');
    expect(render({ kind: 'set-plan', info: free }, true)).toBe(`${JSON.stringify(freeJson)}\n`);
  });

  it('explains failures in the user’s terms', () => {
    expect(explainFailure(new NoSuchKeyError(7n))).toBe('no API key has id 7');
    expect(explainFailure(new ApiKeyInputError('API key 3 is revoked; issue a new key instead'))).toBe('API key 3 is revoked; issue a new key instead');
    expect(explainFailure(Object.assign(new Error('missing'), { code: 'P2021' }))).toBe(
      'the api_keys table does not exist: apply the migrations first (npm run db:migrate)',
    );
    expect(explainFailure(new Error('boom'))).toBe('failed: boom');
    expect(explainOpenFailure(new DataDirLockedError('DATA_DIR is in use'))).toBe('DATA_DIR is in use');
    expect(explainOpenFailure(new Error('ENOENT'))).toBe('cannot open the database: ENOENT');
  });
});
