// The browser test (`npm run test:browser`): the operator console driven by Debian's Chromium
// (/usr/bin/chromium, `apt-get install chromium`) through playwright-core, headless, with axe-core
// checking each page. Kept out of `npm test`, like the cluster test: it needs the browser, which
// CI installs in the background while the suites run (.ci/run).
const base = require('./jest.config.cjs');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/browser'],
  testRegex: '.*\\.browser-spec\\.ts$',
  testTimeout: 120000,
  maxWorkers: 1,
};
