import { apiKeysConfig } from '../config/api-keys.config.js';
import { databaseConfig } from '../config/database.config.js';
import { runtimeConfig } from '../config/runtime.config.js';
import { webhooksConfig } from '../config/webhooks.config.js';
import { EX_CONFIG, loadConfigOrReport } from '../config/exit-on-config-error.js';
import { escapeUnsafeText } from '../http/names.js';
import { Command, parseCommand, USAGE, UsageError } from './apikey.args.js';
import type { KeyStore } from './apikey.operations.js';

/** Where the tool writes, and the environment it reads its configuration from. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

/** audit verify found an entry changed, removed or inserted out of order. */
export const EX_AUDIT_BROKEN = 3;

const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
};

/**
 * The key tool: `npm run apikey -- <command>`. Issues, lists, changes, rolls and revokes API keys,
 * shows their usage, and issues, lists and revokes admin tokens, in
 * the database the configuration selects (DATABASE_URL, else the embedded DATA_DIR, which it
 * locks like the server does). Exit codes: 0 done, 1 failed, 2 bad arguments, 3 the audit log
 * does not verify, 78 bad config.
 * The arguments are read in apikey.args.ts, the work done in apikey.operations.ts and shown by
 * apikey.output.ts; this runs them in order. What it writes about its arguments or the database
 * passes escapeUnsafeText: text from either may hold terminal controls.
 *
 * Resolves to the process exit code.
 */
export async function runApiKeyTool(argv: string[], io: Io = processIo): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseCommand(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`apikey: ${escapeUnsafeText(err.message)}\n\n${USAGE}`);
    return 2;
  }
  if (cmd.kind === 'help') {
    io.out(USAGE);
    return 0;
  }
  // What does the work (the services, the database drivers) is loaded only now: a usage error and
  // --help answer at once.
  const { ACTOR_NAME, cliActor, openKeyStore, perform } = await import('./apikey.operations.js');
  const { explainFailure, explainOpenFailure, render } = await import('./apikey.output.js');
  // Who runs the tool, for the audit log: read by the tool alone, never by the server.
  const actorName = io.env.APIKEY_ACTOR === '' ? undefined : io.env.APIKEY_ACTOR;
  if (actorName !== undefined && !ACTOR_NAME.test(actorName)) {
    io.err(
      `apikey: APIKEY_ACTOR must be 1 to 64 letters, digits and ._@- (the audit log records cli:<APIKEY_ACTOR>), got "${escapeUnsafeText(actorName.slice(0, 100))}"\n`,
    );
    return EX_CONFIG;
  }
  // The database's settings, the API key secrets and the webhooks' (key changes are announced),
  // nothing else of the server's.
  const config = await loadConfigOrReport(
    { database: databaseConfig, apiKeys: apiKeysConfig, runtime: runtimeConfig, webhooks: webhooksConfig },
    io.env,
    io.err,
  );
  if (!config) return EX_CONFIG;
  let store: KeyStore;
  try {
    // Migration notes go to stderr, so that --json output stays one clean line.
    store = await openKeyStore(config, (m) => io.err(`${m}\n`));
  } catch (err) {
    io.err(`apikey: ${escapeUnsafeText(explainOpenFailure(err))}\n`);
    return 1;
  }
  try {
    const outcome = await perform(cmd, store, cliActor(actorName));
    io.out(render(outcome, cmd.json));
    return outcome.kind === 'audit-verify' && !outcome.verdict.ok ? EX_AUDIT_BROKEN : 0;
  } catch (err) {
    io.err(`apikey: ${escapeUnsafeText(explainFailure(err))}\n`);
    return 1;
  } finally {
    await store.close();
  }
}
