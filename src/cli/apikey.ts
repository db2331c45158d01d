import 'reflect-metadata';
import { compileEmbeddedForShortRun } from '../database/embedded-database.js';
import { runApiKeyTool } from './apikey.command.js';

compileEmbeddedForShortRun();

// Entry point of `npm run apikey -- …`; the tool itself is in apikey.command.ts.
runApiKeyTool(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`apikey: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
