import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The two API key formats (docs/api-keys.md). Both carry 256 bits from the CSPRNG in 43 base62
 * characters behind a recognisable prefix, at a fixed length, so secret scanners find them:
 *
 * - version 1, `ask_` + 43 + 6 characters of CRC32 over everything before them (53 in all). The
 *   checksum catches typos, but anyone can compute it: only the database tells a forged key.
 * - version 2, `ask2_` + 43 + 22 characters of HMAC-SHA256 (truncated to 128 bits) keyed with
 *   API_KEY_CHECKSUM_SECRET (70 in all). Without the secret a key cannot be forged, so one whose
 *   tag does not match is refused without any I/O.
 *
 * Only a hash of the key is ever stored (hashApiKey), whatever its version.
 */
export const API_KEY_PREFIX = 'ask_';
export const API_KEY_V2_PREFIX = 'ask2_';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_BYTES = 32;
/** 62^43 > 2^256: enough digits for any 32-byte value. */
const BODY_LENGTH = 43;
/** 62^6 > 2^32: enough digits for any CRC32. */
const CRC_LENGTH = 6;
/** 62^22 > 2^128: enough digits for a 16-byte tag. */
const TAG_BYTES = 16;
const TAG_LENGTH = 22;

export const API_KEY_LENGTH = API_KEY_PREFIX.length + BODY_LENGTH + CRC_LENGTH;
export const API_KEY_V2_LENGTH = API_KEY_V2_PREFIX.length + BODY_LENGTH + TAG_LENGTH;
/** How much of a key is kept in clear to tell keys apart in listings: the prefix + 8 characters. */
const DISPLAY_BODY_LENGTH = 8;

const V1_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CRC_LENGTH}}$`);
const V2_PATTERN = new RegExp(`^${API_KEY_V2_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + TAG_LENGTH}}$`);

export type ApiKeyVersion = 1 | 2;

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

function bigintOf(bytes: Buffer): bigint {
  return BigInt(`0x${bytes.toString('hex')}`);
}

function crcChecksum(payload: string): string {
  return base62(BigInt(crc32(payload)), CRC_LENGTH);
}

function tag(payload: string, secret: string): string {
  return base62(
    bigintOf(createHmac('sha256', secret).update(payload, 'utf8').digest().subarray(0, TAG_BYTES)),
    TAG_LENGTH,
  );
}

/**
 * A new API key: version 2 when a checksum secret is given, else version 1 (a deployment that
 * has not configured API_KEY_CHECKSUM_SECRET yet).
 */
export function generateApiKey(checksumSecret?: string, random: (size: number) => Buffer = randomBytes): string {
  const body = base62(bigintOf(random(SECRET_BYTES)), BODY_LENGTH);
  if (checksumSecret === undefined) {
    const payload = API_KEY_PREFIX + body;
    return payload + crcChecksum(payload);
  }
  const payload = API_KEY_V2_PREFIX + body;
  return payload + tag(payload, checksumSecret);
}

/**
 * The version of `text` when it is a key this service could have issued: the right shape and
 * checksum (version 1) or tag (version 2, only with the secret); null for anything else. No I/O.
 */
export function apiKeyVersion(text: string, checksumSecret?: string): ApiKeyVersion | null {
  if (text.length === API_KEY_LENGTH && V1_PATTERN.test(text)) {
    const split = API_KEY_LENGTH - CRC_LENGTH;
    return crcChecksum(text.slice(0, split)) === text.slice(split) ? 1 : null;
  }
  if (checksumSecret !== undefined && text.length === API_KEY_V2_LENGTH && V2_PATTERN.test(text)) {
    const split = API_KEY_V2_LENGTH - TAG_LENGTH;
    const expected = Buffer.from(tag(text.slice(0, split), checksumSecret));
    return timingSafeEqual(expected, Buffer.from(text.slice(split))) ? 2 : null;
  }
  return null;
}

/** The part of a key shown in listings; far too little of it to use or guess the key. */
export function displayPrefix(key: string): string {
  const prefix = key.startsWith(API_KEY_V2_PREFIX) ? API_KEY_V2_PREFIX : API_KEY_PREFIX;
  return key.slice(0, prefix.length + DISPLAY_BODY_LENGTH);
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

/** Constant-time comparison of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
