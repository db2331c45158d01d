import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { runtimeConfig, type RuntimeConfig } from '../config/runtime.config.js';
import type { Database } from '../database/database.js';
import { DATABASE } from '../database/prisma.tokens.js';
import { ApiKeysService } from './api-keys.service.js';
import type { Actor } from '../audit/audit.js';

export const DEV_KEY_NAME = 'development key (local use only)';
export const DEV_KEY_PLAN = 'free';
/** The actor of the development key's audit entry: the server itself, at its first start. */
const DEV_KEY_ACTOR: Actor = { kind: 'system', name: 'dev-key' };

/**
 * First run on the embedded default: with no key at all in the database, nobody could call
 * the API, so one development key is issued and printed once to stdout (not to the logs).
 * Only in development: never with DATABASE_URL, and never in production or test, where a
 * secret printed to the output would end up in collected logs.
 */
@Injectable()
export class DevKeyIssuer implements OnApplicationBootstrap {
  constructor(
    private readonly keys: ApiKeysService,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(runtimeConfig.token) private readonly config: RuntimeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.db.kind !== 'embedded' || this.config.nodeEnv !== 'development') return;
    if ((await this.keys.count()) > 0) return;
    const { info, key } = await this.keys.create({ name: DEV_KEY_NAME, plan: DEV_KEY_PLAN }, DEV_KEY_ACTOR);
    process.stdout.write(
      [
        '',
        `The embedded database had no API keys, so development key ${info.id} (plan ${info.plan}) was issued.`,
        'It is for local use only and is shown this once:',
        '',
        `    ${key}`,
        '',
        'Send it as "Authorization: Bearer <key>". Manage keys with: npm run apikey -- list',
        '',
        '',
      ].join('\n'),
    );
  }
}
