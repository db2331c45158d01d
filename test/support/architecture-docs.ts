// The check of test/docs/architecture-docs.e2e-spec.ts: ARCHITECTURE.md's "Layers" block (the kernel
// and feature folders) and its table of what each feature may also import, read from the page
// and compared with the import map the lint enforces (import-map.mjs).

export interface ImportMap {
  KERNEL: Record<string, string[]>;
  FEATURES: Record<string, string[]>;
}

export interface DocumentedMap {
  kernel: string[];
  features: string[];
  /** Each feature in the table's first column, with the features its second column names. */
  table: Map<string, string[]>;
  /** Features the table names in more than one row. */
  repeated: string[];
}

/**
 * The folders a layer line of the "Layers" block lists: the names after its label, and on the
 * lines that follow indented to its first name (a list too long for one line goes on there).
 */
function layerList(block: string[], label: string): string[] {
  const at = block.findIndex((line) => new RegExp(`^${label}\\s`).test(line));
  if (at < 0) return [];
  const column = /^\S+\s+/.exec(block[at])![0].length;
  const names = block[at].slice(column).trim().split(/\s+/);
  for (const line of block.slice(at + 1)) {
    const indent = /^\s*/.exec(line)![0].length;
    if (indent !== column || line.trim() === '') break;
    names.push(...line.trim().split(/\s+/));
  }
  return names;
}

/** The features a cell names: comma-separated, each maybe followed by a note in parentheses. */
function featureNames(cell: string): string[] {
  return cell
    .replace(/\([^)]*\)/g, '')
    .split(',')
    .map((name) => name.replace(/`/g, '').trim())
    .filter((name) => name !== '');
}

export function readArchitecture(markdown: string): DocumentedMap {
  const lines = markdown.split('\n');
  const layers = lines.findIndex((line) => line.trim() === '## Layers');
  const open = lines.findIndex((line, i) => i > layers && line.startsWith('```'));
  const close = lines.findIndex((line, i) => i > open && line.startsWith('```'));
  const block = layers < 0 || open < 0 || close < 0 ? [] : lines.slice(open + 1, close);

  const table = new Map<string, string[]>();
  const repeated: string[] = [];
  const header = lines.findIndex((line) => /^\|\s*feature\s*\|\s*may also import\s*\|$/.test(line.trim()));
  if (header >= 0) {
    for (const row of lines.slice(header + 2)) {
      if (!row.trim().startsWith('|')) break;
      const [features, imports] = row.trim().slice(1, -1).split('|');
      for (const feature of featureNames(features)) {
        if (table.has(feature)) repeated.push(feature);
        table.set(feature, featureNames(imports ?? ''));
      }
    }
  }
  return { kernel: layerList(block, 'kernel'), features: layerList(block, 'features'), table, repeated };
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();
const list = (names: string[]) => (names.length === 0 ? '(none)' : [...names].sort().join(', '));

/** Where ARCHITECTURE.md and the import map disagree, one sentence each; empty when they agree. */
export function architectureDrift(markdown: string, map: ImportMap): string[] {
  const doc = readArchitecture(markdown);
  const drift: string[] = [];
  const layer = (name: string, documented: string[], mapped: string[]) => {
    if (documented.length === 0) drift.push(`ARCHITECTURE.md: no "${name}" line in the Layers block`);
    else if (!sameSet(documented, mapped))
      drift.push(
        `ARCHITECTURE.md's Layers block lists as ${name}: ${list(documented)}; import-map.mjs has: ${list(mapped)}`,
      );
  };
  layer('kernel', doc.kernel, Object.keys(map.KERNEL));
  layer('features', doc.features, Object.keys(map.FEATURES));

  if (doc.table.size === 0) drift.push('ARCHITECTURE.md: no "| feature | may also import |" table');
  for (const feature of doc.repeated) drift.push(`ARCHITECTURE.md's import table has ${feature} in more than one row`);
  for (const [feature, documented] of doc.table) {
    const mapped = map.FEATURES[feature];
    if (mapped === undefined)
      drift.push(`ARCHITECTURE.md's import table has ${feature}, not a feature in import-map.mjs`);
    else if (!sameSet(documented, mapped))
      drift.push(
        `ARCHITECTURE.md's import table says ${feature} may also import: ${list(documented)}; import-map.mjs says: ${list(mapped)}`,
      );
  }
  for (const feature of Object.keys(map.FEATURES))
    if (doc.table.size > 0 && !doc.table.has(feature))
      drift.push(`ARCHITECTURE.md's import table has no row for ${feature} (import-map.mjs lists it)`);
  return drift;
}
