// Jest runs in CommonJS mode; @swc/jest compiles our ESM TypeScript and the ESM packages of
// @nestjs/* and @prisma/client on the fly (see docs/testing.md, "The layers"; Jest's native ESM mode breaks
// on @nestjs/throttler, which requires ESM @nestjs/common).
const os = require('node:os');

const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    keepClassNames: true,
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

// Suites run side by side, one per worker: each makes its own databases (copies of one migrated
// template), Redis key prefixes and ports, and the processes they start compile the service once
// per source state. One worker more than the cores: a suite spends much of its time waiting on
// the processes and databases it drives. JEST_WORKERS overrides it (CI runs two suites at once
// and gives each one worker).
const workers = Number(process.env.JEST_WORKERS) || os.availableParallelism() + 1;

module.exports = {
  rootDir: '.',
  maxWorkers: workers,
  testEnvironment: 'node',
  // The official client (clients/typescript, an npm workspace) is tested with the service.
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/clients/typescript'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@prisma/client|github-slugger)/)'],
  modulePathIgnorePatterns: ['<rootDir>/clients/typescript/node_modules'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  setupFiles: ['reflect-metadata'],
  testTimeout: 30000,
};
