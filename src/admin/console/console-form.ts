import { ApiKeyInputError, EXPIRES_AT_FORMAT, type KeyChange } from '../../api-keys/api-key-input.js';
import { parseRfc3339DateTime } from '../../time/rfc3339.js';

/** A key's form fields as typed, to show the form again after a refusal. */
export interface KeyFormValues {
  name: string;
  plan: string;
  perMinute: string;
  perDay: string;
  expiresAt: string;
  /** Undefined when the form had no scope fields. */
  scopes?: string[];
}

export function keyFormValues(form: URLSearchParams): KeyFormValues {
  return {
    name: form.get('name') ?? '',
    plan: form.get('plan') ?? '',
    perMinute: form.get('perMinute') ?? '',
    perDay: form.get('perDay') ?? '',
    expiresAt: form.get('expiresAt') ?? '',
    scopes: form.has('scopesGiven') ? form.getAll('scopes') : undefined,
  };
}

function wholeNumber(field: string, text: string): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (!/^[0-9]{1,12}$/.test(t)) throw new ApiKeyInputError(`${field} must be a whole number, got "${t}"`);
  return Number(t);
}

/**
 * The change a key's form asks for: every field it shows (ApiKeysService checks them and records
 * only what differs). The limits count for the enterprise plan only: the fields are on every form.
 * Throws ApiKeyInputError for a number or an expiry that cannot be read.
 */
export function keyChangeOf(values: KeyFormValues): KeyChange & { name: string; plan: string; expiresAt: Date | null } {
  const enterprise = values.plan === 'enterprise';
  const expiresText = values.expiresAt.trim();
  const expiresAt = expiresText === '' ? null : parseRfc3339DateTime(expiresText);
  if (expiresAt === null && expiresText !== '') {
    throw new ApiKeyInputError(`expiresAt must be ${EXPIRES_AT_FORMAT}, or empty`);
  }
  return {
    name: values.name,
    plan: values.plan,
    perMinute: enterprise ? wholeNumber('perMinute', values.perMinute) : undefined,
    perDay: enterprise ? wholeNumber('perDay', values.perDay) : undefined,
    expiresAt,
    scopes: values.scopes,
  };
}
