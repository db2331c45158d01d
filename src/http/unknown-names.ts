import { ApiError } from '../errors/api-error.js';

/** Most unknown names an error lists, in its message and its details. */
export const MAX_NAMES_ECHOED = 10;
/** Longest part of a name an error repeats. */
export const MAX_NAME_ECHOED = 64;

/**
 * The 400 for unknown body fields or query parameters, naming them. What is echoed is bounded
 * (the first MAX_NAMES_ECHOED names, each cut to MAX_NAME_ECHOED characters, and how many more
 * there are), so the answer stays small whatever the size of the request.
 */
export function unknownNamesError(what: 'field' | 'parameter', names: string[]): ApiError {
  const shown = names
    .slice(0, MAX_NAMES_ECHOED)
    .map((n) => (n.length > MAX_NAME_ECHOED ? `${n.slice(0, MAX_NAME_ECHOED)}…` : n));
  const more = names.length - shown.length;
  const message = `Unknown ${what}${names.length > 1 ? 's' : ''}: ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}.`;
  const details = shown.map((field) => ({ field, message: `${field} is not an accepted ${what}` }));
  // An unknown body field fails the body's validation; an unknown query parameter has its own code.
  return what === 'field'
    ? new ApiError('validation_failed', message, { details })
    : new ApiError('unknown_parameter', message, { details });
}
