// The infrastructure tests (`npm run test:infra`): the built service against real PgBouncer, Redis
// Cluster and Redis Sentinel processes the tests start on loopback (installing Debian's pgbouncer
// when missing). Kept out of `npm test`, like the cluster test: they need those binaries and start
// a dozen processes; CI runs them as a step of their own (.ci/run).
const base = require('./jest.config.cjs');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/infra'],
  testRegex: '.*\\.infra-spec\\.ts$',
  testTimeout: 120000,
  // One suite at a time: they start clusters of processes and measure them under load.
  maxWorkers: 1,
};
