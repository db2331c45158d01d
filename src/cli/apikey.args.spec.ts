import fc from 'fast-check';
import { DEFAULT_OVERLAP_MS, duration, parseCommand, UsageError } from './apikey.args.js';

describe('apikey tool arguments', () => {
  it('parses each command', () => {
    expect(parseCommand(['create', '--name', ' CI ', '--plan', 'pro'])).toEqual({
      kind: 'create',
      name: 'CI',
      plan: 'pro',
      perMinute: undefined,
      perDay: undefined,
      expiresInMs: undefined,
      json: false,
    });
    expect(
      parseCommand([
        'create',
        '--name=Big',
        '--plan=enterprise',
        '--per-minute',
        '5000',
        '--per-day',
        '1000000',
        '--json',
      ]),
    ).toEqual({
      kind: 'create',
      name: 'Big',
      plan: 'enterprise',
      perMinute: 5000,
      perDay: 1_000_000,
      expiresInMs: undefined,
      json: true,
    });
    expect(parseCommand(['list', '--json'])).toEqual({ kind: 'list', json: true });
    expect(parseCommand(['revoke', '12'])).toEqual({ kind: 'revoke', id: 12n, json: false });
    expect(parseCommand(['set-plan', '3', 'business'])).toMatchObject({ kind: 'set-plan', id: 3n, plan: 'business' });
    expect(parseCommand(['set-plan', '3', 'enterprise', '--per-minute', '9', '--per-day', '99'])).toMatchObject({
      plan: 'enterprise',
      perMinute: 9,
      perDay: 99,
    });
    expect(parseCommand(['create', '--name', 'shop', '--plan', 'pro', '--scopes', 'pets:read'])).toMatchObject({
      kind: 'create',
      scopes: ['pets:read'],
    });
    expect(parseCommand(['set-scopes', '3', ' pets:write , pets:read'])).toEqual({
      kind: 'set-scopes',
      id: 3n,
      scopes: ['pets:read', 'pets:write'],
      json: false,
    });
    expect(parseCommand(['--help'])).toEqual({ kind: 'help' });
    expect(parseCommand(['list', '-h'])).toEqual({ kind: 'help' });
  });

  it.each([
    [[]],
    [['frobnicate']],
    [['create', '--plan', 'pro']],
    [['create', '--name', 'x']],
    [['create', '--name', '   ', '--plan', 'pro']],
    [['create', '--name', 'x'.repeat(101), '--plan', 'pro']],
    [['create', '--name', 'x', '--plan', 'gold']],
    [['create', '--name', 'x', '--plan', 'pro', '--per-minute', '10']],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '10']],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '0', '--per-day', '10']],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '1.5', '--per-day', '10']],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '10', '--per-day', '9']],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '10', '--per-day', '3000000000']],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '10', '--per-day', '1000000001']],
    [['update', '3', '--per-minute', '1000000001']],
    [['create', '--name', 'x', '--name', 'y', '--plan', 'pro']],
    [['create', '--name', 'x', '--plan', 'pro', '--colour', 'red']],
    [['create', '--name', 'x', '--plan', 'pro', 'extra']],
    [['list', 'all']],
    [['revoke']],
    [['revoke', 'abc']],
    [['revoke', '0']],
    [['revoke', '-1']],
    [['revoke', '99999999999999999999']],
    [['revoke', '1', '2']],
    [['set-plan', '1']],
    [['set-plan', '1', 'free', '--per-day', '5']],
    [['create', '--name', 'x', '--plan', 'pro', '--scopes', '']],
    [['create', '--name', 'x', '--plan', 'pro', '--scopes', 'pets:delete']],
    [['create', '--name', 'x', '--plan', 'pro', '--scopes', 'pets:read,pets:read']],
    [['set-scopes', '1']],
    [['set-scopes', '1', 'admin']],
    [['set-scopes', '1', 'pets:read,']],
    [['usage', '1', '--to', '2026-11-02']],
    [['usage', '1', '--from', '2026-11-01']],
    [['usage', '--from', '2026-11-01', '--to', '2026-11-02']],
    [['usage', '1', '--from', 'last week', '--to', '2026-11-02']],
    [['usage', '1', '--from', '2026-11-02', '--to', '2026-11-01']],
    [['usage', '1', '--from', '2026-11-01', '--to', '2026-11-02', '--granularity', 'minute']],
    [['usage', '1', '--from', '2026-01-01', '--to', '2026-03-01']],
  ])('refuses %j as a usage error', (argv) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
  });

  it('refuses key and admin token names a pet name may not have: controls, line separators, bidirectional controls', () => {
    const bad = fc.constantFrom('\u202e', '\u2028', '\u2029', '\u0085', '\u009b', '\u001b', '\u2066', '\u0000');
    fc.assert(
      fc.property(bad, fc.string({ maxLength: 10 }), (c, rest) => {
        const name = `Acme${c}${rest}`;
        for (const argv of [
          ['create', '--name', name, '--plan', 'pro'],
          ['update', '3', '--name', name],
          ['admin', 'create', '--name', name],
        ]) {
          expect(() => parseCommand(argv)).toThrow(UsageError);
          expect(() => parseCommand(argv)).toThrow(/name must not contain control characters/);
        }
      }),
    );
    expect(() => parseCommand(['admin', 'create', '--name', '\u3164'])).toThrow(
      /name must contain a visible character/,
    );
    expect(() => parseCommand(['create', '--name', 'x'.repeat(101), '--plan', 'pro'])).toThrow(
      /name must be 1 to 100 characters long/,
    );
    expect(parseCommand(['admin', 'create', '--name', ' Zoë’s café 🐕 '])).toMatchObject({ name: 'Zoë’s café 🐕' });
  });

  it('reads --expires-at as an RFC 3339 date-time with an offset, or never, and refuses any other form as such', () => {
    expect(parseCommand(['update', '3', '--expires-at', '2027-01-31T09:00:00+09:00'])).toMatchObject({
      expiresAt: new Date('2027-01-31T00:00:00Z'),
    });
    expect(parseCommand(['update', '3', '--expires-at', 'never'])).toMatchObject({ expiresAt: null });
    for (const raw of [
      '2027-01-01T00:00:00', // no offset: each machine would read it in its own time zone
      '2027-01-01',
      '2027-W05-3',
      '2027-032',
      '2027-02-30T00:00:00Z',
      '2027-01-01T24:00:00Z',
      '2027-01-01T00:00:00+24:00',
      '2027-01-01T00:00Z',
    ]) {
      expect(() => parseCommand(['update', '3', '--expires-at', raw])).toThrow(
        new UsageError(
          `expiresAt (--expires-at) must be an RFC 3339 date-time with an offset, such as 2027-01-31T00:00:00Z, or never; got "${raw}"`,
        ),
      );
    }
  });

  it('parses usage with its range, by hour unless told, widened to whole periods', () => {
    expect(parseCommand(['usage', '7', '--from', '2026-11-01', '--to', '2026-11-01T10:30:00Z'])).toEqual({
      kind: 'usage',
      id: 7n,
      query: { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-11-01T11:00:00Z'), granularity: 'hour' },
      json: false,
    });
    expect(
      parseCommand(['usage', '7', '--from', '2026-11-01', '--to', '2026-12-01', '--granularity', 'day', '--json']),
    ).toEqual({
      kind: 'usage',
      id: 7n,
      query: { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z'), granularity: 'day' },
      json: true,
    });
    expect(() => parseCommand(['usage', '7', '--from', '2026-11-02', '--to', '2026-11-01'])).toThrow(
      /^--to: to must be after from$/,
    );
  });

  it('parses key lifetimes: create --expires-in, and roll with its overlap (24h unless told)', () => {
    expect(parseCommand(['create', '--name', 'CI', '--plan', 'free', '--expires-in', '90d'])).toMatchObject({
      kind: 'create',
      expiresInMs: 90 * 86_400_000,
    });
    expect(parseCommand(['roll', '7'])).toEqual({ kind: 'roll', id: 7n, overlapMs: DEFAULT_OVERLAP_MS, json: false });
    expect(parseCommand(['roll', '7', '--overlap', '0', '--json'])).toEqual({
      kind: 'roll',
      id: 7n,
      overlapMs: 0,
      json: true,
    });
    expect(parseCommand(['roll', '7', '--overlap', '30m'])).toMatchObject({ overlapMs: 1_800_000 });
    for (const bad of [
      ['create', '--name', 'CI', '--plan', 'free', '--expires-in', '0'],
      ['roll'],
      ['roll', '7', '--overlap', '1w'],
      ['roll', '7', '--overlap', '-1h'],
    ]) {
      expect(() => parseCommand(bad)).toThrow(UsageError);
    }
  });

  it('reads a duration exactly or refuses it with a usage error, never anything else (property)', () => {
    const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3650 }), fc.constantFrom('s', 'm', 'h', 'd'), (n, unit) => {
        expect(duration('x', `${n}${unit}`)).toBe(n * units[unit]);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (text) => {
        let ms: number | undefined;
        try {
          ms = duration('x', text, true);
        } catch (err) {
          expect(err).toBeInstanceOf(UsageError);
          return;
        }
        expect(Number.isSafeInteger(ms) && ms >= 0 && ms <= 3650 * 86_400_000).toBe(true);
      }),
    );
  });
});
