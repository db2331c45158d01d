import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { base62 } from '../api-keys/api-key-format.js';
import { ApiKeyInputError, checkName } from '../api-keys/api-key-input.js';

/**
 * Admin tokens (docs/admin-api.md): `asadm_` + 43 base62 characters of 256 bits from the CSPRNG
 * + 6 characters of CRC32 over everything before them (55 in all). The prefix differs from both
 * API key formats (`ask_`, `ask2_`), so a secret scanner tells an admin token from an API key
 * by its first characters and checks its checksum without any secret; no API key has this shape,
 * so an API key is never taken for an admin token. Only a hash is stored (hashApiKey).
 */
export const ADMIN_TOKEN_PREFIX = 'asadm_';

const BODY_LENGTH = 43;
const CRC_LENGTH = 6;
export const ADMIN_TOKEN_LENGTH = ADMIN_TOKEN_PREFIX.length + BODY_LENGTH + CRC_LENGTH;
const PATTERN = new RegExp(`^${ADMIN_TOKEN_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CRC_LENGTH}}$`);
/** How much of a token listings show: the prefix + 8 characters. */
const DISPLAY_BODY_LENGTH = 8;

function checksum(payload: string): string {
  return base62(BigInt(crc32(payload)), CRC_LENGTH);
}

export function generateAdminToken(random: (size: number) => Buffer = randomBytes): string {
  const payload = ADMIN_TOKEN_PREFIX + base62(BigInt(`0x${random(32).toString('hex')}`), BODY_LENGTH);
  return payload + checksum(payload);
}

/** Whether `text` has an admin token's shape and checksum (no I/O). */
export function isAdminTokenShaped(text: string): boolean {
  if (text.length !== ADMIN_TOKEN_LENGTH || !PATTERN.test(text)) return false;
  const split = ADMIN_TOKEN_LENGTH - CRC_LENGTH;
  return checksum(text.slice(0, split)) === text.slice(split);
}

/** The part of a token shown in listings; far too little of it to use or guess the token. */
export function adminTokenDisplayPrefix(token: string): string {
  return token.slice(0, ADMIN_TOKEN_PREFIX.length + DISPLAY_BODY_LENGTH);
}

/**
 * An admin token's name, as checkName has it, and without a colon: the audit log writes the key
 * tool as `cli:<user>` and the service as `system:<name>`, so a token named `cli:root` would read
 * as the key tool run by root. Every name with a colon is refused, not only those two prefixes,
 * so that no later kind of actor can be taken either.
 */
export function checkAdminTokenName(name: string): string {
  const checked = checkName(name);
  if (checked.includes(':')) {
    throw new ApiKeyInputError(
      `an admin token's name must not contain ":" (the audit log names the key tool cli:<user> and the service system:<name>), got "${checked}"`,
    );
  }
  return checked;
}
