// Lint that catches async mistakes (floating and misused promises) with type information.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { FEATURES, KERNEL } from './import-map.mjs';

/*
 * Import boundaries of src/ (ARCHITECTURE.md). The kernel is what every request passes through
 * and what features build on; it never imports a feature, and a kernel folder imports only the
 * kernel folders listed for it in import-map.mjs. A feature imports the kernel and only the
 * features listed for it there; nothing imports the application shell (app.module, app.factory,
 * main). Checked on import paths with ESLint's own no-restricted-imports; the lists themselves
 * must have no cycle.
 */
const SHELL = ['**/app.module*', '**/app.factory*', '**/main*'];

/** Every folder with the folders it may import: a feature may import the whole kernel. */
const MAP = {
  ...KERNEL,
  ...Object.fromEntries(Object.entries(FEATURES).map(([f, allowed]) => [f, [...Object.keys(KERNEL), ...allowed]])),
};
const assertAcyclic = (map) => {
  const done = new Set();
  const visit = (folder, path) => {
    if (path.includes(folder)) {
      const cycle = [...path.slice(path.indexOf(folder)), folder].join(' -> ');
      throw new Error(
        `import-map.mjs: the import map of src/ has a cycle: ${cycle}. Move code so that one of these imports goes.`,
      );
    }
    if (!(folder in map))
      throw new Error(`import-map.mjs: ${path.at(-1)} lists ${folder}, which is not in KERNEL or FEATURES.`);
    if (done.has(folder)) return;
    for (const next of map[folder]) visit(next, [...path, folder]);
    done.add(folder);
  };
  for (const folder of Object.keys(map)) visit(folder, []);
};
assertAcyclic(MAP);
const unlisted = readdirSync(`${import.meta.dirname}/src`, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'generated' && !(d.name in MAP))
  .map((d) => `src/${d.name}`);
if (unlisted.length > 0) throw new Error(`import-map.mjs: add ${unlisted.join(', ')} to KERNEL or FEATURES.`);

const boundary = (folder, allowed) => ({
  files: [`src/${folder}/**/*.ts`],
  ignores: [`src/${folder}/**/*.spec.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...Object.keys(MAP)
            .filter((f) => f !== folder && !allowed.includes(f))
            .map((f) => ({
              group: [`../**/${f}/*`],
              message:
                f in KERNEL
                  ? `src/${folder} may not import src/${f}: a kernel folder imports only the kernel folders listed for it in import-map.mjs, which have no cycle.`
                  : folder in KERNEL
                    ? `src/${folder} is kernel: it never imports a feature (src/${f}). See ARCHITECTURE.md.`
                    : `src/${folder} may not import src/${f}: features import the kernel and only the features listed for them in import-map.mjs.`,
            })),
          { group: SHELL, message: 'Nothing imports the application shell (app.module, app.factory, main).' },
        ],
      },
    ],
  },
});

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'src/generated/**',
      'clients/typescript/src/generated/**',
      'clients/*/node_modules/**',
      'clients/*/dist/**',
      'node_modules/**',
      'coverage/**',
      '.tmp/**',
      'bench/results/**',
      'data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['**/*.cjs', '**/*.mjs', '**/*.js'],
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', console: 'readonly' } },
  },
  ...Object.entries(MAP).map(([folder, allowed]) => boundary(folder, allowed)),
  // CommonJS files (the Jest configs) load each other with require.
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
