import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../support/built-service.js';
import { haproxyVersion, RunningHaproxy, startHaproxy } from '../support/haproxy.js';
import { Answer, send } from './load.js';

/*
 * The balancer's TLS frontend (deploy/haproxy/haproxy.cfg, HAPROXY_TLS_CERT): HAProxy with the
 * shipped configuration and a certificate this test makes (openssl, for 127.0.0.1), in front of
 * two dead ports, so that every request gets the balancer's own 503: over HTTPS it is the Error
 * body with HSTS; over plain HTTP a 308 to the HTTPS origin; without HAPROXY_TLS_CERT no TLS at all.
 */

/** One HTTPS request trusting only `ca`. */
function sendTls(url: string, ca: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { ca, headers, agent: false, servername: 'localhost' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

describe('the balancer terminates TLS when given a certificate', () => {
  let dir: string;
  let cert: string;
  let tls: RunningHaproxy;
  let plain: RunningHaproxy | undefined;
  let tlsPort: number;

  beforeAll(async () => {
    haproxyVersion();
    dir = mkdtempSync(path.join(tmpdir(), 'animal-store-tls-'));
    const key = path.join(dir, 'key.pem');
    const crt = path.join(dir, 'crt.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        crt,
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(crt, 'utf8');
    // HAProxy's crt: the chain and the key in one PEM file.
    writeFileSync(path.join(dir, 'site.pem'), cert + readFileSync(key, 'utf8'));
    tlsPort = await freePort();
    const dead = `127.0.0.1:${await freePort()}`;
    tls = await startHaproxy(
      { app1: dead, app2: dead },
      {
        HAPROXY_TLS_CERT: path.join(dir, 'site.pem'),
        HAPROXY_TLS_BIND: `127.0.0.1:${tlsPort}`,
        HAPROXY_HTTPS_URL: 'https://api.example.test',
      },
    );
  });

  afterAll(async () => {
    await tls?.stop();
    await plain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers over HTTPS with the balancer's Error body and HSTS", async () => {
    const answer = await sendTls(`https://localhost:${tlsPort}/v1/pets`, cert, { 'X-Request-Id': 'tls-check-1' });
    expect({
      status: answer.status,
      type: answer.headers['content-type'],
      hsts: answer.headers['strict-transport-security'],
      body: JSON.parse(answer.body) as unknown,
    }).toEqual({
      status: 503,
      type: 'application/json',
      hsts: 'max-age=63072000',
      body: { code: 'service_unavailable', message: expect.any(String), status: 503, requestId: 'tls-check-1' },
    });
  });

  it('refuses a client that does not trust the certificate, and TLS below 1.2', async () => {
    await expect(sendTls(`https://localhost:${tlsPort}/v1/pets`, '')).rejects.toThrow(/certificate/i);
    const old = new Promise((resolve, reject) => {
      const req = https.request(
        `https://localhost:${tlsPort}/`,
        { ca: cert, agent: false, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
    await expect(old).rejects.toThrow();
  });

  it('redirects plain HTTP to the HTTPS origin, keeping the path, query and method (308), without HSTS', async () => {
    const answer = await send(`${tls.url}/v1/pets?limit=5`, { method: 'POST', body: '{}' });
    expect({
      status: answer.status,
      location: answer.headers.location,
      hsts: answer.headers['strict-transport-security'],
    }).toEqual({ status: 308, location: 'https://api.example.test/v1/pets?limit=5', hsts: undefined });
  });

  it('serves plain HTTP as before without HAPROXY_TLS_CERT', async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    plain = await startHaproxy({ app1: dead, app2: dead });
    const answer = await send(`${plain.url}/v1/pets`);
    expect({ status: answer.status, hsts: answer.headers['strict-transport-security'] }).toEqual({
      status: 503,
      hsts: undefined,
    });
  });
});
