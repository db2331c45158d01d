import express from 'express';
import fc from 'fast-check';
import { ConfigError, loadConfig } from './config.js';
import { checkSlices, defineConfig } from './define-config.js';
import { Reader } from './env.js';
import { checkListenHost } from './listen-address.js';
import { trustListProblem } from './server.config.js';

/** Whether Express takes `value` as its "trust proxy" setting (what the server sets it to). */
function expressTakes(value: string): boolean {
  try {
    express().set('trust proxy', value);
    return true;
  } catch {
    return false;
  }
}

const octet = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
const entry = fc.oneof(
  ipv4,
  fc.tuple(ipv4, fc.integer({ min: 0, max: 40 })).map(([ip, bits]) => `${ip}/${bits}`),
  fc.constantFrom('loopback', 'linklocal', 'uniquelocal', '::1', 'fe80::/10', '10.0.0.0/255.0.0.0', 'maybe', ''),
  fc.string({ maxLength: 12 }),
);
const trustList = fc.array(entry, { minLength: 1, maxLength: 4 }).map((entries) => entries.join(', '));

describe('TRUST_PROXY', () => {
  it('is taken exactly when Express takes it', () => {
    fc.assert(
      fc.property(trustList, (raw) => {
        expect(trustListProblem(raw) === undefined).toBe(expressTakes(raw));
      }),
      { numRuns: 500 },
    );
  });

  it('as a list: passed on as given when valid, refused naming the variable otherwise', () => {
    fc.assert(
      fc.property(trustList, (raw) => {
        const value = raw.trim();
        fc.pre(!['true', 'false', ''].includes(value) && !/^\d+$/.test(value));
        if (trustListProblem(value) === undefined)
          expect(loadConfig({ TRUST_PROXY: raw }).server.trustProxy).toBe(value);
        else expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(/^TRUST_PROXY must be /);
      }),
      { numRuns: 300 },
    );
  });
});

describe('whole numbers', () => {
  it('are taken in range and refused otherwise, naming the variable', () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat({ max: 2_000_000 }).map(String), fc.string({ maxLength: 8 })), (raw) => {
        const n = Number(raw);
        if (raw === '') expect(loadConfig({ MAX_CONNECTIONS: raw }).server.maxConnections).toBe(1000);
        else if (/^\d+$/.test(raw) && n >= 1 && n <= 1_000_000)
          expect(loadConfig({ MAX_CONNECTIONS: raw }).server.maxConnections).toBe(n);
        else expect(() => loadConfig({ MAX_CONNECTIONS: raw })).toThrow(/^MAX_CONNECTIONS must be /);
      }),
    );
  });
});

/** Settings that are each wrong on their own, and the variable each problem names. */
const BAD: Record<string, string> = {
  PORT: 'eighty',
  TRUST_PROXY: 'maybe',
  LOG_LEVEL: 'loud',
  DB_POOL_MAX: '0',
  REDIS_URL: 'http://cache',
  RATE_LIMIT_PREFIX: '{x}',
  PUBLIC_BASE_URL: 'https://api.example.com/v2',
  CORS_ORIGINS: 'https://a.example.com/',
  METRICS_TOKEN: 'short',
  API_KEY_PEPPER: 'too-short',
  OTEL_TRACES_SAMPLER: 'sometimes',
  SHUTDOWN_TIMEOUT_MS: '-1',
};

describe('a load with several bad values', () => {
  it('reports every one of them, each once, in one ConfigError', () => {
    fc.assert(
      fc.property(fc.subarray(Object.keys(BAD), { minLength: 1 }), (names) => {
        const env = Object.fromEntries(names.map((name) => [name, BAD[name]]));
        let error: unknown;
        try {
          loadConfig(env);
        } catch (err) {
          error = err;
        }
        expect(error).toBeInstanceOf(ConfigError);
        const problems = (error as ConfigError).problems;
        expect(problems.map((p) => /^[A-Z_]+/.exec(p)?.[0]).sort()).toEqual([...names].sort());
      }),
      { numRuns: 200 },
    );
  });

  it('adds the problems of the start-up checks to those of the parsing', async () => {
    const slice = defineConfig(
      'probe',
      (env) => {
        env.problem('A is wrong', 'A');
        return { b: env.raw('B') };
      },
      async (value, env) => {
        await Promise.resolve();
        if (value.b === 'bad') env.problem('B is wrong', 'B');
      },
    );
    await expect(checkSlices({ slice }, { B: 'bad' })).rejects.toMatchObject({
      problems: ['A is wrong', 'B is wrong'],
    });
  });
});

describe('a listen address', () => {
  async function problemsOf(host: string): Promise<string[]> {
    const env = new Reader({});
    await checkListenHost(env, 'HOST', host);
    return env.problems;
  }

  it('takes the wildcards, loopback and names that resolve to this machine', async () => {
    for (const host of ['0.0.0.0', '::', '127.0.0.1', 'localhost']) expect(await problemsOf(host)).toEqual([]);
  });

  it('refuses a name that does not resolve, and an address of another machine', async () => {
    expect(await problemsOf('not-a-host.invalid')).toEqual([
      expect.stringMatching(/^HOST "not-a-host\.invalid" does not resolve \(ENOTFOUND|EAI_AGAIN\)/),
    ]);
    // 203.0.113.0/24 is TEST-NET-3 (RFC 5737): never an interface of this machine.
    expect(await problemsOf('203.0.113.7')).toEqual([
      expect.stringMatching(/^HOST "203\.0\.113\.7" is not an address of this machine/),
    ]);
  });
});
