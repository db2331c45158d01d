import { ApiError } from '../errors/api-error.js';
import { parsePositiveInt64 } from '../json/int64.js';
import type { AdminListQueryDto } from './dto/list-query.dto.js';

const DEFAULT_LIMIT = 20;
/** Cursor tokens: a versioned prefix and an id, base64url; opaque to clients. */
const PREFIX = 'a1.';

export function encodeAdminCursor(id: bigint): string {
  return Buffer.from(PREFIX + id.toString(), 'utf8').toString('base64url');
}

function decodeAdminCursor(cursor: string): bigint | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(PREFIX)) return null;
  const id = parsePositiveInt64(text.slice(PREFIX.length));
  return id !== null && encodeAdminCursor(id) === cursor ? id : null;
}

/** The page a validated list query asks for; 400 invalid_parameter for a cursor not issued here. */
export function adminPage(query: AdminListQueryDto): { limit: number; from?: bigint } {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit };
  const from = decodeAdminCursor(query.cursor);
  if (from === null) {
    throw new ApiError('invalid_parameter', 'cursor is not a cursor this service issued.', {
      details: [{ field: 'cursor', message: 'cursor is not a cursor this service issued' }],
    });
  }
  return { limit, from };
}

/**
 * The RFC 8288 `Link` to the next page (relative to this listener), or undefined on the last;
 * `filters` (those given) are carried to it.
 */
export function adminNextLink(
  path: string,
  limit: number,
  next: bigint | null,
  filters: Record<string, string | undefined> = {},
): string | undefined {
  if (next === null) return undefined;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) params.set(name, value);
  params.set('limit', String(limit));
  params.set('cursor', encodeAdminCursor(next));
  return `<${path}?${params.toString()}>; rel="next"`;
}
