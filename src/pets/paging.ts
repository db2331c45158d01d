import { ApiError } from '../errors/api-error.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { ListPetsQueryDto } from './dto/list-pets-query.dto.js';
import type { PetStatus } from './pet-status.js';
import type { Int64 } from './pets.repository.js';

const DEFAULT_LIMIT = 20;

/** The page listPets asks for: at most `limit` animals (with `status`, if given) after id `after`. */
export interface PageRequest {
  limit: number;
  status?: PetStatus;
  after?: bigint;
}

/** The page a validated listPets query asks for; 400 invalid_parameter for a cursor not issued here. */
export function pageRequest(query: ListPetsQueryDto): PageRequest {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  let after: bigint | undefined;
  if (query.cursor !== undefined) {
    after = decodeCursor(query.cursor) ?? undefined;
    if (after === undefined) {
      throw new ApiError('invalid_parameter', 'cursor is not a cursor this service issued.', {
        details: [{ field: 'cursor', message: 'cursor is not a cursor this service issued' }],
      });
    }
  }
  return { limit, status: query.status, after };
}

/**
 * The RFC 8288 `Link` header to the page after this one (same limit and filter, the cursor after
 * `nextAfter`), or undefined on the last page. Written as text: a number, a status from the
 * closed PET_STATUSES and a base64url cursor hold no character a query needs encoded, so no
 * URLSearchParams, a visible share of the handler's own time (ledger of bench scenario listPets).
 */
export function nextPageLink(publicBaseUrl: string, request: PageRequest, nextAfter: Int64 | null): string | undefined {
  if (nextAfter === null) return undefined;
  const status = request.status ? `&status=${request.status}` : '';
  return `<${publicBaseUrl}/pets?limit=${request.limit}${status}&cursor=${encodeCursor(nextAfter)}>; rel="next"`;
}
