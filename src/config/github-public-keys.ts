import { createPublicKey, type KeyObject } from 'node:crypto';

/** One of GitHub's secret scanning signing keys. */
export interface GithubPublicKey {
  key: KeyObject;
  /** GitHub marks the key it signs with now as current; reports signed by another are refused. */
  current: boolean;
}

/** Largest keys file read: GitHub's answer holds a handful of keys of a few hundred bytes. */
export const MAX_KEYS_FILE_BYTES = 1024 * 1024;
const MAX_KEYS = 100;
const MAX_IDENTIFIER_LENGTH = 200;

/**
 * Parses a keys file in the format of GitHub's `GET /meta/public_keys/secret_scanning` answer
 * (`{"public_keys": [{"key_identifier", "key", "is_current"}]}`, each key a PEM ECDSA P-256 public
 * key): the keys by identifier, or throws an Error saying what is wrong.
 */
export function parseGithubPublicKeys(text: string): Map<string, GithubPublicKey> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('it is not JSON');
  }
  const list = (parsed as { public_keys?: unknown } | null)?.public_keys;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_KEYS) {
    throw new Error(`it must hold "public_keys", an array of 1 to ${MAX_KEYS} keys`);
  }
  const keys = new Map<string, GithubPublicKey>();
  list.forEach((entry: unknown, i) => {
    const { key_identifier: id, key: pem, is_current: current } = (entry ?? {}) as Record<string, unknown>;
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_IDENTIFIER_LENGTH) {
      throw new Error(`public_keys[${i}].key_identifier must be a string of 1 to ${MAX_IDENTIFIER_LENGTH} characters`);
    }
    if (typeof current !== 'boolean') throw new Error(`public_keys[${i}].is_current must be true or false`);
    if (keys.has(id)) throw new Error(`public_keys[${i}].key_identifier repeats ${id}`);
    keys.set(id, { key: ecdsaP256Key(pem, i), current });
  });
  return keys;
}

function ecdsaP256Key(pem: unknown, i: number): KeyObject {
  let key: KeyObject;
  try {
    if (typeof pem !== 'string') throw new Error('not a string');
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new Error(`public_keys[${i}].key is not a PEM public key`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error(`public_keys[${i}].key is not an ECDSA P-256 key`);
  }
  return key;
}
