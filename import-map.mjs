/*
 * The import map of src/ (ARCHITECTURE.md, "Layers"): every kernel folder with the kernel folders
 * it may import, every feature folder with the features it may import (a feature may import the
 * whole kernel). eslint.config.mjs enforces it on import paths; test/architecture-docs.e2e-spec.ts
 * checks that ARCHITECTURE.md's layer lists and import table say the same.
 */
export const KERNEL = {
  config: [],
  database: ['config', 'framework', 'lifecycle', 'tracing'],
  deprecation: ['config', 'errors', 'time'],
  errors: ['framework', 'json', 'logging', 'request-context'],
  framework: [],
  http: ['config', 'errors', 'framework', 'json', 'logging', 'request-context', 'tracing'],
  json: [],
  lifecycle: ['config'],
  logging: ['config'],
  redis: ['config'],
  'request-context': [],
  time: [],
  tracing: ['config', 'logging'],
};
export const FEATURES = {
  auth: [],
  'rate-limit': ['auth', 'metrics'],
  admission: ['auth', 'rate-limit', 'usage'],
  idempotency: [],
  pets: ['auth', 'idempotency'],
  health: ['auth', 'metrics'],
  metrics: ['auth'],
  openapi: ['auth', 'rate-limit'],
  admin: ['auth', 'metrics', 'openapi', 'usage'],
  cli: ['auth', 'usage'],
  usage: ['auth', 'metrics'],
};
