// Jest runs in CommonJS mode; @swc/jest compiles our ESM TypeScript and the ESM packages of
// @nestjs/* and @prisma/client on the fly (see docs/testing.md, "The layers"; Jest's native ESM mode breaks
// on @nestjs/throttler, which requires ESM @nestjs/common).
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

module.exports = {
  rootDir: '.',
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
