import { parsePositiveInt64 } from '../json/int64.js';

/**
 * Keyset cursor of listPets: the id of the last animal on the previous page, so the next page
 * is `id > after` on the primary key (no OFFSET). Opaque to clients: a versioned, base64url
 * token, so its form can change without breaking clients that only echo it.
 */
const PREFIX = 'p1.';

export function encodeCursor(afterId: bigint | number): string {
  return Buffer.from(PREFIX + afterId.toString(), 'utf8').toString('base64url');
}

/** The id a cursor points after, or null when the text is not a cursor this service issued. */
export function decodeCursor(cursor: string): bigint | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(PREFIX)) return null;
  // Re-encoding must give the same token: rejects non-canonical base64 spellings.
  const id = parsePositiveInt64(text.slice(PREFIX.length));
  if (id === null || encodeCursor(id) !== cursor) return null;
  return id;
}
