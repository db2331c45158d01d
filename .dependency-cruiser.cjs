// No file-level import cycle anywhere in the code: `npm run lint` runs this after ESLint
// (`npm run lint:cycles` alone). Type-only imports count, since a cycle through `import type`
// still ties two files into one. The boundaries between the folders of src/ are ESLint's
// (eslint.config.mjs, import-map.mjs). dependency-cruiser 17 is the last major that runs on
// Node 20, the oldest Node the service supports.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment:
        'This file imports a file that imports it back, directly or through others. Move what both need into a file of its own (shared types into a *.types.ts), or the work that ties them into a service.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)generated/', '(^|/)dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
