// Compares the client's public API with the committed report, etc/animal-store-client.api.md,
// using API Extractor (configured in api-extractor.json):
//
//     node scripts/api-report.mjs           check: exits 1 when the API differs from the report
//     node scripts/api-report.mjs --local   update: writes the report from the current API
//
// The declarations are compiled into a directory of their own under .tmp/ (not dist/, which
// `npm pack` rebuilds in place, maybe at the same time in another test run).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { createTwoFilesPatch } from 'diff';

const packageDir = path.resolve(import.meta.dirname, '..');
const configPath = path.join(packageDir, 'api-extractor.json');
const tsc = createRequire(path.resolve(packageDir, '../../package.json')).resolve('typescript/bin/tsc');
const localBuild = process.argv.includes('--local');

mkdirSync(path.join(packageDir, '.tmp'), { recursive: true });
const work = mkdtempSync(path.join(packageDir, '.tmp', 'api-report-'));
const declarations = path.join(work, 'dts');
try {
  execFileSync(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--declaration', '--outDir', declarations],
    { cwd: packageDir, stdio: 'inherit' },
  );
} catch {
  rmSync(work, { recursive: true, force: true });
  console.error('\nThe declarations do not compile (tsc, above): no API report to compare.');
  process.exit(1);
}

const configObject = ExtractorConfig.loadFile(configPath);
configObject.mainEntryPointFilePath = path.join(declarations, 'index.d.ts');
configObject.apiReport.reportTempFolder = work;
const config = ExtractorConfig.prepare({
  configObject,
  configObjectFullPath: configPath,
  packageJsonFullPath: path.join(packageDir, 'package.json'),
});
// The script says itself what a change means and how to accept it: API Extractor's preamble and
// its "copy the file from the temporary folder" (a folder removed at exit) are left out.
const QUIET = new Set(['console-preamble', 'console-api-report-not-copied']);
const result = Extractor.invoke(config, {
  localBuild,
  messageCallback(message) {
    if (QUIET.has(message.messageId)) message.handled = true;
  },
});

const [{ fileName }] = config.reportConfigs;
const committed = path.join(config.reportFolder, fileName);
const current = path.join(work, fileName);
const report = path.relative(packageDir, committed);
if (result.succeeded) {
  rmSync(work, { recursive: true, force: true });
  console.log(
    localBuild && result.apiReportChanged ? `${report} updated: commit it.` : `The public API matches ${report}.`,
  );
} else if (result.apiReportChanged) {
  const before = existsSync(committed) ? readFileSync(committed, 'utf8') : '';
  const patch = createTwoFilesPatch(report, `${report} (the current API)`, before, readFileSync(current, 'utf8'));
  rmSync(work, { recursive: true, force: true });
  console.error(
    `\n${patch}\nThe client's public API differs from ${report} (the diff above). If the change is meant,\n` +
      'run `npm run api:report -w clients/typescript` at the repository root, commit the updated report,\n' +
      'and add the change to CHANGELOG.md: a breaking change is a new major version.',
  );
  process.exitCode = 1;
} else {
  console.error(`\nAPI Extractor found ${result.errorCount} errors and ${result.warningCount} warnings (above).`);
  process.exitCode = 1;
}
