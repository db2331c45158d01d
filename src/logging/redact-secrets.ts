/**
 * Redaction of our secrets from whatever a client sent, before it is written to a log line or a
 * trace attribute: a client may put an API key or an admin token where it does not belong (a
 * query string such as `?api_key=…`, a path such as `/v1/pets/<key>`, a header other than
 * Authorization), and the service then copies it from the request into its own output.
 *
 * The secrets have recognisable prefixes (docs/security.md, "Secrets in logs"):
 * API keys `ask_` and `ask2_`, admin tokens `asadm_` (each followed by base62 characters;
 * src/api-keys/api-key-format.ts and src/admin-tokens/admin-token-format.ts, whose generators the spec redacts), and
 * webhook signing secrets `whsec_` (followed by base64). Any such prefix followed by at least
 * MIN_BODY_CHARS characters of its alphabet is replaced by the prefix and `[REDACTED]`, so the
 * line still says which kind of secret was sent and where, and the secret is gone.
 *
 * A request target is percent-encoded text, and a client or a proxy may encode any character, in
 * upper or lower case hex, once or twice (`_` as `%5F`, `%5f` or `%255F`): each character of the
 * prefix and of the body is matched raw or encoded. The match is greedy, so an encoded key
 * followed by more base62 text loses that text too: better a few characters too many than one
 * character of a secret.
 */

/** Fewer characters after a prefix are not taken for a secret (`ask_id=`, `task_list`). */
export const MIN_BODY_CHARS = 16;

/** What replaces the body of a secret. */
export const REDACTED = '[REDACTED]';

/** `%XX` for a character, hex in either case, optionally encoded twice (`%25XX`). */
function encoded(char: string): string {
  const hex = char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  const digit = (d: string) => (d === d.toLowerCase() ? d : `[${d}${d.toLowerCase()}]`);
  return `%(?:25)?${digit(hex[0])}${digit(hex[1])}`;
}

/** The prefix, each character raw or percent-encoded. */
function prefixPattern(prefix: string): string {
  return [...prefix].map((c) => `(?:${c.replace(/[^0-9A-Za-z]/, '\\$&')}|${encoded(c)})`).join('');
}

/** One base62 character, raw or percent-encoded (0-9 are 30-39, A-Z 41-5A, a-z 61-7A). */
const BASE62_CHAR = '(?:[0-9A-Za-z]|%(?:25)?(?:3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]))';
/** One base64 character (base62, `+`, `/`, `=`), raw or percent-encoded. */
const BASE64_CHAR = `(?:${BASE62_CHAR}|[+/=]|%(?:25)?(?:2[BbFf]|3[Dd]))`;

/** The secret formats: a prefix and the alphabet of what follows it. */
export const SECRET_FORMATS: readonly { prefix: string; body: string }[] = [
  { prefix: 'ask2_', body: BASE62_CHAR },
  { prefix: 'ask_', body: BASE62_CHAR },
  { prefix: 'asadm_', body: BASE62_CHAR },
  { prefix: 'whsec_', body: BASE64_CHAR },
];

/**
 * A body stops where another secret's prefix starts (`ask_…ask_…` sent back to back): the next
 * secret is then matched on its own instead of losing its prefix to the first one's body.
 */
const NEXT_PREFIX = `(?!${SECRET_FORMATS.map(({ prefix }) => prefixPattern(prefix)).join('|')})`;
const SECRET = new RegExp(
  SECRET_FORMATS.map(
    ({ prefix, body }) => `(${prefixPattern(prefix)})(?:${NEXT_PREFIX}${body}){${MIN_BODY_CHARS},}`,
  ).join('|'),
  'g',
);
const SECRET_ANYWHERE = new RegExp(SECRET.source);

/** The plain prefix of a matched secret, whichever way its characters were encoded. */
function plainPrefix(groups: (string | undefined)[]): string {
  const index = groups.findIndex((g) => g !== undefined);
  return SECRET_FORMATS[index].prefix;
}

/** `text` with every secret-shaped string replaced by its prefix and `[REDACTED]`. */
export function redactSecrets(text: string): string {
  return text.replace(SECRET, (...args: unknown[]) => {
    const groups = args.slice(1, 1 + SECRET_FORMATS.length) as (string | undefined)[];
    return plainPrefix(groups) + REDACTED;
  });
}

/** Whether `text` holds a secret-shaped string anywhere, raw or percent-encoded. */
export function containsSecret(text: string): boolean {
  return SECRET_ANYWHERE.test(text);
}
