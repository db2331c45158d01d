/*
 * The import map of src/ (ARCHITECTURE.md, "Layers"): every kernel folder with the kernel folders
 * it may import, every feature folder with the features it may import (a feature may import the
 * whole kernel). eslint.config.mjs enforces it on import paths; test/docs/architecture-docs.e2e-spec.ts
 * checks that ARCHITECTURE.md's layer lists and import table say the same.
 */
export const KERNEL = {
  config: [],
  database: ['config', 'library-internals', 'lifecycle', 'tracing'],
  deprecation: ['config', 'errors', 'time'],
  errors: ['library-internals', 'json', 'logging', 'request-context'],
  'library-internals': [],
  http: ['config', 'errors', 'library-internals', 'json', 'logging', 'request-context', 'tracing'],
  json: [],
  lifecycle: ['config'],
  logging: ['config'],
  redis: ['config'],
  'request-context': [],
  time: [],
  tracing: ['config', 'logging'],
};
export const FEATURES = {
  audit: [],
  'api-keys': ['audit'],
  'admin-tokens': ['api-keys', 'audit', 'auth'],
  'admin-sessions': [],
  auth: ['api-keys'],
  'rate-limit': ['api-keys', 'auth', 'metrics'],
  admission: ['auth', 'rate-limit', 'usage'],
  idempotency: [],
  pets: ['auth', 'idempotency'],
  health: ['auth', 'metrics'],
  metrics: ['api-keys', 'auth'],
  openapi: ['api-keys', 'auth', 'rate-limit'],
  admin: ['admin-sessions', 'admin-tokens', 'api-keys', 'audit', 'metrics', 'openapi', 'usage', 'webhooks'],
  cli: ['admin-tokens', 'api-keys', 'audit', 'usage', 'webhooks'],
  usage: ['api-keys', 'metrics'],
  'leaked-keys': ['api-keys', 'audit', 'auth', 'metrics', 'rate-limit'],
  webhooks: ['api-keys', 'audit', 'metrics'],
};
