import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { Clock, SystemClock } from '../time/clock.js';
import { adminTokenDisplayPrefix, generateAdminToken, isAdminTokenShaped } from './admin-token-format.js';
import { AdminTokensRepository, type AdminTokenInfo } from './admin-tokens.repository.js';
import { hashApiKey } from '../api-keys/api-key-format.js';
import { ApiKeyInputError, checkName } from '../api-keys/api-key-input.js';
import { AuditLogRepository } from '../audit/audit-log.repository.js';
import { instant, type Actor } from '../audit/audit.js';

export type { AdminTokenInfo } from './admin-tokens.repository.js';

/** How often a token in use has its last_used_at written: at most once a minute. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Admin tokens (docs/admin-api.md): issued, listed and revoked by the key tool, each issue and
 * revocation with its audit entry in its own transaction; and the check of a bearer token the
 * admin API makes on every request. Only a hash of a token is stored, made as an API key's is
 * (with API_KEY_PEPPER when set).
 */
@Injectable()
export class AdminTokensService {
  private readonly logger = new Logger('AdminTokens');

  constructor(
    private readonly repository: AdminTokensRepository,
    private readonly audit: AuditLogRepository,
    @Inject(apiKeysConfig.token) private readonly config: ApiKeysConfig,
    @Optional() private readonly clock: Clock = new SystemClock(),
  ) {}

  /** Issues a token named `name` (unique, for good). The token exists nowhere else: show it once. */
  async create(name: string, actor: Actor): Promise<{ info: AdminTokenInfo; token: string }> {
    const checked = checkName(name);
    const token = generateAdminToken();
    const info = await this.repository.transaction(async (tx) => {
      if (await this.repository.findByName(checked, tx)) {
        throw new ApiKeyInputError(`an admin token named "${checked}" exists already; names are never reused`);
      }
      const row = await this.repository.insert(
        {
          name: checked,
          prefix: adminTokenDisplayPrefix(token),
          hash: hashApiKey(token, this.config.apiKeyPepper),
          createdAt: this.clock.now(),
        },
        tx,
      );
      await this.audit.append(tx, {
        actor,
        action: 'admin_token.created',
        keyId: null,
        adminTokenId: row.id,
        changes: { name: { before: null, after: row.name }, prefix: { before: null, after: row.prefix } },
      });
      return row;
    });
    return { info, token };
  }

  async list(): Promise<AdminTokenInfo[]> {
    return this.repository.list();
  }

  /** Revokes a token; null when there is none with that id. Revoking twice records nothing. */
  async revoke(id: bigint, actor: Actor): Promise<{ info: AdminTokenInfo; alreadyRevoked: boolean } | null> {
    const now = this.clock.now();
    return this.repository.transaction(async (tx) => {
      if (!(await this.repository.revoke(id, now, tx))) {
        const info = await this.repository.findInfo(id, tx);
        return info && { info, alreadyRevoked: true };
      }
      await this.audit.append(tx, {
        actor,
        action: 'admin_token.revoked',
        keyId: null,
        adminTokenId: id,
        changes: { revokedAt: { before: null, after: instant(now) } },
      });
      const info = (await this.repository.findInfo(id, tx)) as AdminTokenInfo;
      return { info, alreadyRevoked: false };
    });
  }

  /**
   * The live token `text` is, or null: anything not shaped as an admin token (an API key
   * included) is refused without a query; a revoked or unknown one after the lookup.
   */
  async authenticate(text: string): Promise<AdminTokenInfo | null> {
    if (!isAdminTokenShaped(text)) return null;
    const info = await this.repository.findLiveByHash(hashApiKey(text, this.config.apiKeyPepper));
    if (!info) return null;
    const now = this.clock.now();
    if (info.lastUsedAt === null || now.getTime() - info.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS) {
      this.repository.touch(info.id, now).catch((err: unknown) => {
        this.logger.warn(`could not record the use of admin token ${info.id}: ${(err as Error)?.message ?? err}`);
      });
    }
    return info;
  }
}
