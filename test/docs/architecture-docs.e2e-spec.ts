// ARCHITECTURE.md's layers and its table of what each feature may also import say what the lint
// enforces: the import map (import-map.mjs) that eslint.config.mjs checks every import against.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FEATURES, KERNEL } from '../../import-map.mjs';
import { architectureDrift, readArchitecture } from '../support/architecture-docs.js';

const ROOT = path.resolve(__dirname, '../..');
const MAP = { KERNEL, FEATURES };

describe('ARCHITECTURE.md against the import map of the lint', () => {
  const page = readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');

  it('reads every layer and every row of the table', () => {
    const doc = readArchitecture(page);
    expect(doc.kernel).toContain('request-context');
    expect(doc.kernel).toContain('tracing');
    expect(doc.features).toContain('pets');
    expect(doc.table.get('pets')).toEqual(expect.arrayContaining(['auth', 'idempotency']));
  });

  it('lists the folders of each layer and the imports of each feature as the lint does', () => {
    expect(architectureDrift(page, MAP)).toEqual([]);
  });

  it('names each drift: a folder, a row, an import', () => {
    const edited = page
      .replace(/^(\s+openapi\s.*?)\s+usage\b/m, '$1')
      .replace('| pets | auth (`@ApiKeyAuth`), idempotency (`@Idempotent`) |', '| pets | auth (`@ApiKeyAuth`) |')
      .replace(/^\| cli \|.*\n/m, '')
      .replace('| audit, idempotency |', '| audit, idempotency, kennel |');
    expect(edited).not.toEqual(page);
    expect(architectureDrift(edited, MAP)).toEqual([
      "ARCHITECTURE.md's Layers block lists as features: admin, admin-sessions, admin-tokens, admission, api-keys, audit, auth, cli, health, idempotency, leaked-keys, metrics, openapi, pets, rate-limit, webhooks; import-map.mjs has: admin, admin-sessions, admin-tokens, admission, api-keys, audit, auth, cli, health, idempotency, leaked-keys, metrics, openapi, pets, rate-limit, usage, webhooks",
      "ARCHITECTURE.md's import table has kennel, not a feature in import-map.mjs",
      "ARCHITECTURE.md's import table says pets may also import: auth; import-map.mjs says: auth, idempotency",
      "ARCHITECTURE.md's import table has no row for cli (import-map.mjs lists it)",
    ]);
  });
});
