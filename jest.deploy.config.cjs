// The deploy test (`npm run test:deploy`): the compose stack as shipped (docker-compose.yml, the
// Dockerfile, deploy/) built and run by docker-compose 1.29 against podman, with traffic through
// its HAProxy; and what the compose file passes the containers. Kept out of `npm test`: it
// installs Debian's podman and docker-compose when missing, builds images and takes minutes; CI
// runs it as a step of its own (.ci/run).
const base = require('./jest.config.cjs');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/deploy'],
  testRegex: '.*\\.deploy-spec\\.ts$',
  testTimeout: 120000,
  // One suite at a time: they start clusters of processes and measure them under load.
  maxWorkers: 1,
};
