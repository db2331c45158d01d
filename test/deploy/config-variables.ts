import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The environment variables the service's configuration reads: every name src/config passes to
 * its readers (`int(env, 'PORT', …)`, `optional(env, 'METRICS_TOKEN')`, …), found in the source
 * so that a variable added there is checked here without a list to keep in step.
 */
export function configVariables(files = configFiles()): string[] {
  const names = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\benv\s*,\s*'([A-Z][A-Z0-9_]*)'/g)) names.add(m[1]);
  }
  return [...names].sort();
}

/** src/config's sources, without their specs. */
export function configFiles(): string[] {
  const dir = path.resolve('src/config');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
    .map((f) => path.join(dir, f));
}

/** The variables of the database's slice alone: what the migrate command reads. */
export function databaseVariables(): string[] {
  return configVariables([path.resolve('src/config/database.config.ts')]);
}

/** Names .env.example sets or shows (commented out), in the section that starts with `heading`, or everywhere. */
export function envExampleVariables(heading?: string): string[] {
  let text = readFileSync(path.resolve('.env.example'), 'utf8');
  if (heading !== undefined) {
    const at = text.indexOf(heading);
    if (at === -1) throw new Error(`.env.example has no section "${heading}"`);
    text = text.slice(at);
  }
  return [...new Set([...text.matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]))].sort();
}
