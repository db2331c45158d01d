import { parseCommand, UsageError } from './apikey.args.js';

describe('apikey tool arguments', () => {
  it('parses each command', () => {
    expect(parseCommand(['create', '--name', ' CI ', '--plan', 'pro'])).toEqual({
      kind: 'create',
      name: 'CI',
      plan: 'pro',
      perMinute: undefined,
      perDay: undefined,
      json: false,
    });
    expect(parseCommand(['create', '--name=Big', '--plan=enterprise', '--per-minute', '5000', '--per-day', '1000000', '--json'])).toEqual({
      kind: 'create',
      name: 'Big',
      plan: 'enterprise',
      perMinute: 5000,
      perDay: 1_000_000,
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
  ])('refuses %j as a usage error', (argv) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
  });
});
