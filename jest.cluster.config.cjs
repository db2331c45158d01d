// The cluster test (`npm run test:cluster`): HAProxy with deploy/haproxy/haproxy.cfg in front of two
// instances of the built service. Kept out of `npm test`: it needs the haproxy binary and takes
// a minute or two of rolling restarts; CI runs it as a step of its own (.ci/run).
const base = require('./jest.config.cjs');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/cluster'],
  testRegex: '.*\\.cluster-spec\\.ts$',
  testTimeout: 120000,
  // One suite at a time: they start clusters of processes and measure them under load.
  maxWorkers: 1,
};
