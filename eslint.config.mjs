// Lint that catches async mistakes (floating and misused promises) with type information.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Import boundaries of src/ (ARCHITECTURE.md). The kernel is what every request passes through
 * and what features build on; it never imports a feature. A feature imports the kernel and only
 * the features listed for it here; nothing imports the application shell (app.module,
 * app.factory, main). Checked on import paths with ESLint's own no-restricted-imports.
 */
const KERNEL = ['config', 'database', 'deprecation', 'errors', 'framework', 'http', 'json', 'lifecycle', 'logging', 'redis', 'time', 'tracing'];
const FEATURES = {
  auth: [],
  'rate-limit': ['auth', 'metrics'],
  admission: ['auth', 'rate-limit'],
  idempotency: [],
  pets: ['auth', 'idempotency'],
  health: ['auth', 'metrics'],
  metrics: ['auth'],
  openapi: ['auth', 'rate-limit'],
  cli: ['auth'],
};
const SHELL = ['**/app.module*', '**/app.factory*', '**/main*'];
const boundary = (folder, allowed) => ({
  files: [`src/${folder}/**/*.ts`],
  ignores: [`src/${folder}/**/*.spec.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...Object.keys(FEATURES)
            .filter((f) => f !== folder && !allowed.includes(f))
            .map((f) => ({
              group: [`../**/${f}/*`],
              message: KERNEL.includes(folder)
                ? `src/${folder} is kernel: it never imports a feature (src/${f}). See ARCHITECTURE.md.`
                : `src/${folder} may not import src/${f}: features import the kernel and only the features listed in eslint.config.mjs.`,
            })),
          { group: SHELL, message: 'Nothing imports the application shell (app.module, app.factory, main).' },
        ],
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'src/generated/**', 'clients/typescript/src/generated/**', 'clients/*/node_modules/**', 'clients/*/dist/**', 'node_modules/**', 'coverage/**', '.tmp/**', 'bench/results/**', 'data/**'] },
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
  ...KERNEL.map((folder) => boundary(folder, [])),
  ...Object.entries(FEATURES).map(([folder, allowed]) => boundary(folder, allowed)),
  // CommonJS files (the Jest configs) load each other with require.
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
