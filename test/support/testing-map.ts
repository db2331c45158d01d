// The check of test/docs/testing-map.e2e-spec.ts: docs/testing.md's table "What each suite
// covers" against the spec files on disk, and every test path the documentation names.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Where spec files live, and what makes a file one (every Jest configuration's testRegex). */
const SPEC_ROOTS = ['src', 'test', 'clients/typescript/test'];
const SPEC_FILE = /\.(spec|e2e-spec|cluster-spec|infra-spec|browser-spec|deploy-spec)\.ts$/;
export const MAP_PAGE = 'docs/testing.md';
const MAP_HEADING = '## What each suite covers';

/** Every spec file under the roots, relative to `root`, sorted. */
export function specFiles(root: string): string[] {
  return SPEC_ROOTS.flatMap((dir) =>
    readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && SPEC_FILE.test(e.name) && !e.parentPath.includes('node_modules'))
      .map((e) => path.relative(root, path.join(e.parentPath, e.name))),
  ).sort();
}

/**
 * The map's rows: the code spans of each row's first cell, each a spec file, a folder (ending
 * in `/`, covering every spec under it) or a pattern with `*` (`src/**\/*.spec.ts`).
 */
export function mapRows(text: string): { line: number; entries: string[] }[] {
  const lines = text.split('\n');
  const start = lines.indexOf(MAP_HEADING);
  if (start === -1) throw new Error(`${MAP_PAGE} has no "${MAP_HEADING}" section`);
  const rows: { line: number; entries: string[] }[] = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) {
    const cells = lines[i].split('|');
    if (!lines[i].startsWith('|') || cells.length < 3 || /^\s*-+\s*$/.test(cells[1]) || cells[1].trim() === 'Suite') {
      continue;
    }
    rows.push({ line: i + 1, entries: [...cells[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]) });
  }
  return rows;
}

function matcher(entry: string): (file: string) => boolean {
  if (entry.endsWith('/')) return (file) => file.startsWith(entry);
  if (!entry.includes('*')) return (file) => file === entry;
  const pattern = entry
    .split(/(\*\*\/|\*)/)
    .map((part) => (part === '**/' ? '(?:.*/)?' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const re = new RegExp(`^${pattern}$`);
  return (file) => re.test(file);
}

/**
 * What differs between the map and the disk, one line each: rows naming what is not there, and
 * spec files no row covers, with the row to add.
 */
export function mapProblems(root: string, text = readFileSync(path.join(root, MAP_PAGE), 'utf8')): string[] {
  const files = specFiles(root);
  const rows = mapRows(text);
  const problems: string[] = [];
  const covered = new Set<string>();
  for (const { line, entries } of rows) {
    if (entries.length === 0) problems.push(`${MAP_PAGE}:${line}: the row names no file or folder in its first cell`);
    for (const entry of entries) {
      const matches = files.filter(matcher(entry));
      matches.forEach((f) => covered.add(f));
      if (matches.length > 0) continue;
      const what = entry.endsWith('/') || entry.includes('*') ? 'no spec file matches it' : 'no such spec file';
      problems.push(`${MAP_PAGE}:${line}: \`${entry}\`: ${what}; remove it from the row or correct the path`);
    }
  }
  for (const file of files.filter((f) => !covered.has(f))) {
    problems.push(
      `${file} is in no row of ${MAP_PAGE}, "${MAP_HEADING.slice(3)}": add the row | \`${file}\` | <what it checks> | (or name its folder, \`${path.dirname(file)}/\`, in a row)`,
    );
  }
  return problems;
}

/** Spec paths the documentation names (in code spans) that are not on disk, one line each. */
export function staleSpecPaths(root: string, pages: string[]): string[] {
  const problems: string[] = [];
  for (const page of pages) {
    readFileSync(path.join(root, page), 'utf8')
      .split('\n')
      .forEach((text, i) => {
        for (const [, named] of text.matchAll(
          /`([\w.-]+\/[\w./-]+\.(?:spec|e2e-spec|cluster-spec|infra-spec|browser-spec|deploy-spec)\.ts)`/g,
        )) {
          if (
            !named.includes('*') &&
            !existsSync(path.join(root, named)) &&
            !existsSync(path.join(root, path.dirname(page), named))
          ) {
            problems.push(`${page}:${i + 1}: \`${named}\`: no such file`);
          }
        }
      });
  }
  return problems;
}
