import { LRUCache } from 'lru-cache';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The API key format, modelled on GitHub's tokens: `ask_` + 43 base62 characters carrying
 * 256 bits from the CSPRNG + 6 base62 characters of CRC32 over everything before them.
 *
 * - The prefix makes a leaked key recognisable (secret scanners, grep of a log).
 * - The checksum rejects a mistyped or truncated key without a database lookup: CRC32 detects
 *   every change confined to 32 consecutive bits, so any single-character change fails it.
 * - Only a hash of the key is ever stored (hashApiKey); the checksum is not a secret.
 */
export const API_KEY_PREFIX = 'ask_';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_BYTES = 32;
/** 62^43 > 2^256: enough digits for any 32-byte value. */
const BODY_LENGTH = 43;
/** 62^6 > 2^32: enough digits for any CRC32. */
const CHECKSUM_LENGTH = 6;
export const API_KEY_LENGTH = API_KEY_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
/** How much of a key is kept in clear to tell keys apart in listings: `ask_` + 8 characters. */
export const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

/** Fixed-width base62 (big-endian, zero-padded), so every key has the same length. */
export function base62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = ALPHABET[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  if (out.length > width) throw new RangeError(`${value} needs more than ${width} base62 digits`);
  return out.padStart(width, '0');
}

function checksum(payload: string): string {
  return base62(BigInt(crc32(payload)), CHECKSUM_LENGTH);
}

/** A new API key: 256 random bits, the prefix and the checksum. */
export function generateApiKey(random: (size: number) => Buffer = randomBytes): string {
  const secret = random(SECRET_BYTES);
  const payload = API_KEY_PREFIX + base62(BigInt(`0x${secret.toString('hex')}`), BODY_LENGTH);
  return payload + checksum(payload);
}

/** Whether `text` has the shape and checksum of a key this service issues (no lookup). */
export function isWellFormedApiKey(text: string): boolean {
  if (text.length !== API_KEY_LENGTH || !KEY_PATTERN.test(text)) return false;
  const split = API_KEY_LENGTH - CHECKSUM_LENGTH;
  return checksum(text.slice(0, split)) === text.slice(split);
}

/** The part of a key shown in listings; far too little of it to use or guess the key. */
export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

/**
 * What is stored instead of the key: hex HMAC-SHA256 keyed with the pepper when one is
 * configured (a stolen table is then useless without the service's configuration), else
 * hex SHA-256. Keys carry 256 random bits, so no slow password hash is needed.
 */
export function hashApiKey(key: string, pepper?: string): string {
  return pepper === undefined
    ? createHash('sha256').update(key, 'utf8').digest('hex')
    : createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
}

/**
 * The hash of a well-formed key (null for a malformed one), with a memory of the keys it
 * hashed last: a client sends the same key on every request, and the checksum (BigInt base62)
 * and the HMAC (an object, a buffer and a hex string) would be computed again each time
 * (measured in the bench's ledger under "guard: auth"). A remembered key was well-formed when
 * it was hashed, and is the same string now. Only well-formed keys are remembered; bounded
 * (LRU), so a flood of fresh keys only churns it.
 */
export function memoizedKeyHasher(pepper: string | undefined, max: number): (key: string) => string | null {
  const hashes = new LRUCache<string, string>({ max });
  return (key) => {
    let hash = hashes.get(key);
    if (hash === undefined) {
      if (!isWellFormedApiKey(key)) return null;
      hashes.set(key, (hash = hashApiKey(key, pepper)));
    }
    return hash;
  };
}

/** Constant-time comparison of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
