import fc from 'fast-check';
import { loadConfig } from './config.js';
import { exposureWarning, isLoopbackHost } from './listen-address.js';

/** Few ports, so that equal pairs come up often. */
const port = fc.integer({ min: 3000, max: 3003 });

describe('the listeners’ ports', () => {
  it('refuses every pair of PORT, METRICS_PORT and ADMIN_PORT that are equal, with one message each', () => {
    fc.assert(
      fc.property(port, port, fc.oneof(port, fc.constant(0)), (publicPort, metricsPort, adminPort) => {
        const env = { PORT: String(publicPort), METRICS_PORT: String(metricsPort), ADMIN_PORT: String(adminPort) };
        const expected = [
          ...(metricsPort === publicPort ? [`METRICS_PORT must differ from PORT (${publicPort})`] : []),
          ...(adminPort === publicPort
            ? [`ADMIN_PORT must differ from PORT (${publicPort})`]
            : adminPort === metricsPort
              ? [`ADMIN_PORT must differ from METRICS_PORT (${metricsPort})`]
              : []),
        ];
        let problems: string[] = [];
        try {
          loadConfig(env);
        } catch (err) {
          problems = (err as Error).message.split('\n').filter((line) => /must differ/.test(line));
        }
        expect(problems).toHaveLength(expected.length);
        expected.forEach((start, i) => {
          expect(problems[i]).toContain(start);
          expect(problems[i]).toMatch(/each listener needs a port of its own/);
        });
      }),
    );
  });

  it('lets ADMIN_PORT=0 (a free port) stand beside any other', () => {
    expect(loadConfig({ PORT: '0', ADMIN_PORT: '0' }).admin.adminPort).toBe(0);
    expect(loadConfig({ METRICS_PORT: '9464', ADMIN_PORT: '0' }).admin.adminPort).toBe(0);
  });
});

describe('listeners off loopback in production', () => {
  const octet = fc.integer({ min: 0, max: 255 });
  const loopback = fc.oneof(
    fc.tuple(octet, octet, octet).map((o) => `127.${o.join('.')}`),
    fc.constantFrom('::1', 'localhost', 'LOCALHOST', '[::1]'),
  );
  const open = fc.oneof(
    fc
      .tuple(fc.integer({ min: 1, max: 223 }), octet, octet, octet)
      .filter(([first]) => first !== 127)
      .map((o) => o.join('.')),
    fc.constantFrom('0.0.0.0', '::', 'fd00::5', 'admin.internal'),
  );
  const nodeEnv = fc.constantFrom('development', 'production', 'test');

  it('gets no warning on loopback, whatever NODE_ENV', () => {
    fc.assert(
      fc.property(loopback, nodeEnv, (host, env) => {
        expect(isLoopbackHost(host)).toBe(true);
        expect(exposureWarning(env, 'ADMIN_HOST', host, 9100, 'the admin API')).toBeUndefined();
      }),
    );
  });

  it('gets a warning that names the variable, the address and what is exposed, in production only', () => {
    fc.assert(
      fc.property(open, nodeEnv, fc.constantFrom('ADMIN_HOST', 'METRICS_HOST'), (host, env, variable) => {
        expect(isLoopbackHost(host)).toBe(false);
        const warning = exposureWarning(env, variable, host, 9100, 'the admin API');
        if (env !== 'production') expect(warning).toBeUndefined();
        else {
          expect(warning).toContain(`${variable}=${host} is not loopback`);
          expect(warning).toContain(`the admin API is reachable from the network on ${host}:9100`);
        }
      }),
    );
  });
});
