/**
 * What an API key may do (docs/api-keys.md, "Scopes"). Each operation that needs a scope
 * declares it with @ApiKeyAuth({ scope }); getRateLimit needs none.
 */
export const SCOPES = ['pets:read', 'pets:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** What a key is issued with unless told otherwise, and what keys issued before scopes existed hold. */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES;

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Scopes as stored, in canonical order; anything else in the column is a bug (the CHECK refuses it). */
export function storedScopes(scopes: readonly string[]): Scope[] {
  for (const s of scopes) if (!isScope(s)) throw new Error(`an API key holds an unknown scope: ${s}`);
  return SCOPES.filter((s) => scopes.includes(s));
}
