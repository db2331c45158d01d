import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook } from './webhook-sender.js';
import { isPrivateAddress, urlProblem } from './webhook-targets.js';

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('urlProblem', () => {
  it('takes http and https URLs with a host', () => {
    expect(urlProblem('https://hooks.example.com/a?b=c')).toBeUndefined();
    expect(urlProblem('http://[2606:4700::1]:8080/')).toBeUndefined();
  });

  it.each([
    ['ftp://example.com/', /http or https/],
    ['example.com/hook', /absolute/],
    ['https://user:pw@example.com/', /user name or password/],
    [`https://example.com/${'a'.repeat(2048)}`, /at most 2048/],
  ])('refuses %s', (url, problem) => {
    expect(urlProblem(url)).toMatch(problem);
  });
});

describe('postWebhook', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses a loopback target at connect, by name or by address, unless private targets are allowed', async () => {
    const byName = await postWebhook(`http://localhost:${port}/`, {}, '{}', { allowPrivate: false });
    expect(byName).toEqual({ ok: false, status: null, error: expect.stringMatching(/EPRIVATETARGET/) });
    const byAddress = await postWebhook(`http://127.0.0.1:${port}/`, {}, '{}', { allowPrivate: false });
    expect(byAddress).toEqual({ ok: false, status: null, error: expect.stringMatching(/private address/) });
    expect(hits).toBe(0);
    expect(await postWebhook(`http://127.0.0.1:${port}/`, {}, '{}', { allowPrivate: true })).toEqual({
      ok: true,
      status: 200,
      error: null,
    });
    expect(hits).toBe(1);
  });

  it('gives up on a receiver that never answers', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      const outcome = await postWebhook(url, {}, '{}', { allowPrivate: true, timeoutMs: 200 });
      expect(outcome).toEqual({ ok: false, status: null, error: 'no answer within 200 ms' });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
