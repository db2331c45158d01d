import { Webhook } from 'standardwebhooks';
import { newSigningSecret, SecretBox, signatureHeader } from './webhook-secrets.js';

describe('SecretBox', () => {
  it('seals a secret so that only its key opens it, never in clear', () => {
    const box = new SecretBox('k'.repeat(32));
    const secret = newSigningSecret();
    const sealed = box.seal(secret);
    expect(sealed).toMatch(/^aes256gcm:/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    expect(box.seal(secret)).not.toBe(sealed);
    expect(() => new SecretBox('x'.repeat(32)).open(sealed)).toThrow();
    expect(() => new SecretBox(undefined).open(sealed)).toThrow(/WEBHOOK_SECRET_KEY/);
  });
});

describe('signatureHeader', () => {
  it('is verified by the standardwebhooks package, with one or two secrets', () => {
    const [a, b] = [newSigningSecret(), newSigningSecret()];
    const id = 'msg_1';
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"type":"webhook.test","timestamp":"2026-11-28T00:00:00.000Z","data":{}}';
    const headers = (secrets: string[]) => ({
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, id, timestamp, body),
    });
    expect(new Webhook(a).verify(body, headers([a]))).toEqual(JSON.parse(body));
    expect(new Webhook(a).verify(body, headers([b, a]))).toEqual(JSON.parse(body));
    expect(new Webhook(b).verify(body, headers([b, a]))).toEqual(JSON.parse(body));
    expect(() => new Webhook(b).verify(body, headers([a]))).toThrow();
  });
});
