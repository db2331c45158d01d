import { createHash } from 'node:crypto';
import { apiKeyVersion } from '../api-keys/api-key-format.js';
import { ApiError } from '../errors/api-error.js';

/** Where a report comes from (the metric's `source`, the audit entry's actor). */
export type ReportSource = 'credentials_revoke' | 'github';

/** Most secrets one report may hold: POST /v1/credentials/revoke's and GitHub's. */
export const MAX_REPORTED_SECRETS = 1_000;
/** Largest report body: 1,000 keys of 70 characters in JSON fit with room. */
export const MAX_REPORT_BODY_BYTES = 128 * 1024;

/**
 * The strings of a report that are keys this service could have issued (the right prefix, length
 * and checksum or tag: apiKeyVersion, no I/O), each once, in the order first seen. Anything else
 * is dropped without a database lookup.
 */
export function reportedKeys(strings: readonly string[], checksumSecret?: string): string[] {
  const keys = new Set<string>();
  for (const text of strings) if (!keys.has(text) && apiKeyVersion(text, checksumSecret) !== null) keys.add(text);
  return [...keys];
}

/** The SHA-256 hex of a reported token, as GitHub's answer names it. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** One match of GitHub's report: the token found, its type, where it was found and on what. */
export interface GithubReportEntry {
  token: string;
  type?: string;
  url?: string;
  source?: string;
}

const OPTIONAL_TEXT_FIELDS = ['type', 'url', 'source'] as const;
/** Longest `type`, `url` or `source` kept (longer ones are refused: a URL of GitHub's is far shorter). */
export const MAX_REPORT_TEXT_LENGTH = 2_048;

function invalid(message: string, field: string): ApiError {
  return new ApiError('validation_failed', message, { details: [{ field, message }] });
}

/**
 * GitHub's report, parsed: a JSON array of up to MAX_REPORTED_SECRETS objects, each with a string
 * `token` and, optionally, string `type`, `url` and `source` (other fields GitHub may add are
 * ignored); else 400 validation_failed naming the first field at fault.
 */
export function parseGithubReport(body: unknown): GithubReportEntry[] {
  if (!Array.isArray(body)) throw invalid('The report must be a JSON array of matches.', 'body');
  if (body.length > MAX_REPORTED_SECRETS) {
    throw invalid(`The report must hold at most ${MAX_REPORTED_SECRETS} matches.`, 'body');
  }
  return body.map((item: unknown, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw invalid(`[${i}] must be an object.`, `[${i}]`);
    }
    // Own fields only: a `__proto__` or inherited name is never read as a field.
    const field = (name: string): unknown =>
      Object.hasOwn(item, name) ? (item as Record<string, unknown>)[name] : undefined;
    const token = field('token');
    if (typeof token !== 'string') throw invalid(`[${i}].token must be a string.`, `[${i}].token`);
    const entry: GithubReportEntry = { token };
    for (const name of OPTIONAL_TEXT_FIELDS) {
      const value = field(name);
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string' || value.length > MAX_REPORT_TEXT_LENGTH) {
        throw invalid(
          `[${i}].${name} must be a string of at most ${MAX_REPORT_TEXT_LENGTH} characters.`,
          `[${i}].${name}`,
        );
      }
      entry[name] = value;
    }
    return entry;
  });
}
