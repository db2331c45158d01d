import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { hostOf, isPrivateAddress, publicOnlyLookup } from './webhook-targets.js';

/** How long one attempt may take, connection and answer included. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer is read (for the delivery's last error); the rest is dropped. */
export const MAX_RESPONSE_BYTES = 4_096;

/** The outcome of one attempt: the status when an answer came, else the error. */
export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/**
 * POSTs one signed delivery. Any 2xx succeeds; anything else (a redirect is not followed, a
 * timeout, a refused private address) fails this attempt. At most MAX_RESPONSE_BYTES of the
 * answer are read, and the whole attempt is cut at ATTEMPT_TIMEOUT_MS.
 */
export function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: { allowPrivate: boolean; timeoutMs?: number },
): Promise<AttemptOutcome> {
  const url = new URL(target);
  const host = hostOf(url);
  if (!options.allowPrivate && isIP(host) && isPrivateAddress(host)) {
    return Promise.resolve({ ok: false, status: null, error: `refused: ${host} is a private address` });
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const req = client.request(url, {
      method: 'POST',
      agent: false,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'animal-store-webhooks/1',
      },
      ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup }),
    });
    const timer = setTimeout(
      () =>
        finish({ ok: false, status: null, error: `no answer within ${options.timeoutMs ?? ATTEMPT_TIMEOUT_MS} ms` }),
      options.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({ ok: false, status: null, error: (err.code ? `${err.code}: ` : '') + err.message }),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const ok = status >= 200 && status < 300;
        const text = Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
        finish({ ok, status, error: ok ? null : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}` });
      };
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
        else done();
      });
      res.on('end', done);
      res.on('error', done);
    });
    req.end(body);
  });
}
