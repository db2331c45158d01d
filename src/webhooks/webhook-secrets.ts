import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/** The prefix of a signing secret, as the Standard Webhooks libraries read it. */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * One `v1,<base64 HMAC-SHA256>` signature per secret of `id.timestamp.body`, space-separated: the
 * Standard Webhooks `webhook-signature` header. The key is the secret's base64 part, decoded.
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}

/** Sealed with WEBHOOK_SECRET_KEY: `aes256gcm:` iv, tag and ciphertext in base64, dot-separated. */
const SEALED = 'aes256gcm:';
/** Stored as given: only outside production, when WEBHOOK_SECRET_KEY is unset. */
const PLAIN = 'plain:';

/**
 * Encrypts and decrypts signing secrets at rest with AES-256-GCM under a key derived (SHA-256)
 * from WEBHOOK_SECRET_KEY. Without that key, secrets are kept as given, which only a
 * non-production service allows (WebhooksService refuses creation otherwise).
 */
export class SecretBox {
  private readonly key?: Buffer;

  constructor(secretKey: string | undefined) {
    if (secretKey !== undefined) this.key = createHash('sha256').update(secretKey, 'utf8').digest();
  }

  get encrypts(): boolean {
    return this.key !== undefined;
  }

  seal(secret: string): string {
    if (!this.key) return PLAIN + secret;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return SEALED + [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64')).join('.');
  }

  open(stored: string): string {
    if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
    if (!stored.startsWith(SEALED)) throw new Error('a webhook secret is stored in an unknown form');
    if (!this.key) throw new Error('a webhook secret is encrypted but WEBHOOK_SECRET_KEY is unset');
    const [iv, tag, sealed] = stored
      .slice(SEALED.length)
      .split('.')
      .map((part) => Buffer.from(part, 'base64'));
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
  }
}
