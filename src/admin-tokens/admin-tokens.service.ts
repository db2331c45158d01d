import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { ApiError } from '../errors/api-error.js';
import { Clock, SystemClock } from '../time/clock.js';
import {
  adminTokenDisplayPrefix,
  checkAdminTokenName,
  generateAdminToken,
  isAdminTokenShaped,
} from './admin-token-format.js';
import { AdminTokensRepository, type AdminTokenInfo } from './admin-tokens.repository.js';
import { CACHE_MAX } from '../auth/api-key-cache.js';
import { hashApiKey } from '../api-keys/api-key-format.js';
import { ApiKeyInputError } from '../api-keys/api-key-input.js';
import { AuditLogRepository } from '../audit/audit-log.repository.js';
import { instant, type Actor } from '../audit/audit.js';
import { AuthObserver } from '../auth/auth.types.js';
import { GuessBudgets } from '../auth/guess-budgets.js';

export type { AdminTokenInfo } from './admin-tokens.repository.js';

/** How often a token in use has its last_used_at written: at most once a minute. */
const TOUCH_INTERVAL_MS = 60_000;
/** Lookups of never-found admin tokens running at once (others wait their turn; see GuessBudgets). */
const UNKNOWN_TOKEN_LOOKUPS_AT_ONCE = 2;

/**
 * Admin tokens (docs/admin-api.md): issued, listed and revoked by the key tool, each issue and
 * revocation with its audit entry in its own transaction; and the check of a bearer token the
 * admin API makes on every request. Only a hash of a token is stored, made as an API key's is
 * (with API_KEY_PEPPER when set).
 */
@Injectable()
export class AdminTokensService {
  private readonly logger = new Logger('AdminTokens');
  /** Hashes of tokens this instance has found live: their lookups never count against a budget. */
  private readonly known = new LRUCache<string, true>({ max: CACHE_MAX });
  private readonly guesses: GuessBudgets;

  constructor(
    private readonly repository: AdminTokensRepository,
    private readonly audit: AuditLogRepository,
    @Inject(apiKeysConfig.token) private readonly config: ApiKeysConfig,
    @Optional() private readonly clock: Clock = new SystemClock(),
    @Optional() private readonly observer?: AuthObserver,
  ) {
    this.guesses = new GuessBudgets(
      config.apiKeyFailedLookupsPerAddress,
      config.apiKeyUnknownLookupsPerSecond,
      UNKNOWN_TOKEN_LOOKUPS_AT_ONCE,
    );
  }

  /**
   * Issues a token named `name` (unique, for good; no colon: checkAdminTokenName). The token
   * exists nowhere else: show it once.
   */
  async create(name: string, actor: Actor): Promise<{ info: AdminTokenInfo; token: string }> {
    const checked = checkAdminTokenName(name);
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
   * The live token `text` is, or null, for a request from `address`: anything not shaped as an
   * admin token (an API key included) is refused without a query; a revoked or unknown one after
   * the lookup.
   *
   * A token's checksum is public, so anyone can make well-formed ones: lookups of tokens this
   * instance has never found are bounded as version 1 API keys' are (GuessBudgets, with the same
   * API_KEY_FAILED_LOOKUPS_PER_ADDRESS and API_KEY_UNKNOWN_LOOKUPS_PER_SECOND). Past its
   * address's budget a guess is refused 429 `rate_limit_exceeded` until the minute ends, past the
   * instance's 503 `service_unavailable`, both without a lookup (thrown as ApiError). A token this
   * instance has found before is always looked up, so it is never refused because of its address.
   */
  async authenticate(text: string, address: string): Promise<AdminTokenInfo | null> {
    if (!isAdminTokenShaped(text)) return null;
    const hash = hashApiKey(text, this.config.apiKeyPepper);
    const info = this.known.has(hash) ? await this.lookUp(hash) : await this.lookUpGuess(hash, address);
    if (!info) {
      this.observer?.adminTokenRefused('unknown');
      return null;
    }
    this.known.set(hash, true);
    const now = this.clock.now();
    if (info.lastUsedAt === null || now.getTime() - info.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS) {
      this.repository.touch(info.id, now).catch((err: unknown) => {
        this.logger.warn(`could not record the use of admin token ${info.id}: ${(err as Error)?.message ?? err}`);
      });
    }
    return info;
  }

  private lookUp(hash: string): Promise<AdminTokenInfo | null> {
    this.observer?.adminTokenLookup();
    return this.repository.findLiveByHash(hash);
  }

  /** A token this instance has never found: looked up within its address's and the instance's budgets. */
  private lookUpGuess(hash: string, address: string): Promise<AdminTokenInfo | null> {
    return this.guesses.run(async () => {
      const nowMs = this.clock.now().getTime();
      const failures = this.guesses.check(address, nowMs);
      if (failures === 'address_budget') {
        this.observer?.adminTokenRefused('address_budget');
        const retryAfter = String(60 - (Math.floor(nowMs / 1000) % 60));
        throw new ApiError(
          'rate_limit_exceeded',
          `Too many unknown admin tokens were sent from this client address this minute; its new tokens are checked again in ${retryAfter} seconds.`,
          { headers: { 'Retry-After': retryAfter } },
        );
      }
      if (failures === 'instance_budget') {
        this.observer?.adminTokenRefused('instance_budget');
        throw busy();
      }
      const info = await this.lookUp(hash);
      if (info === null && this.guesses.charge(failures)) {
        this.logger.warn(
          `client address ${address} sent ${this.config.apiKeyFailedLookupsPerAddress} unknown admin tokens this minute: ` +
            'its next ones are refused (429) without a lookup until the minute ends',
        );
      }
      return info;
    }, busy);
  }
}

/** What a lookup of a never-found token gets while the instance's bound is spent, or its queue is full. */
const busy = (): ApiError =>
  new ApiError(
    'service_unavailable',
    'Too many unrecognised admin tokens are being checked right now; retry shortly.',
    {
      headers: { 'Retry-After': '1' },
    },
  );
