import { Inject, Injectable, Optional } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { adminConfig, type AdminConfig } from '../config/admin.config.js';
import { Clock, SystemClock } from '../time/clock.js';
import { AdminSessionsRepository } from './admin-sessions.repository.js';

/** The random id of a session as its cookie carries it: 32 bytes, base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** A live session: the admin token it acts as. */
export interface AdminSession {
  tokenId: bigint;
  tokenName: string;
}

function hashOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/**
 * Sessions of the operator console (docs/admin-console.md). A session is a random id in a
 * cookie; the database keeps only its SHA-256 hash, its admin token and its times. It ends on
 * sign-out, after ADMIN_SESSION_IDLE_MINUTES without a request, ADMIN_SESSION_MAX_HOURS after
 * sign-in, and as soon as its token is revoked: every check reads the token's state with the
 * session, so no cache outlives a revocation.
 */
@Injectable()
export class AdminSessionsService {
  private readonly idleMs: number;
  private readonly maxMs: number;

  constructor(
    private readonly repository: AdminSessionsRepository,
    @Inject(adminConfig.token) config: AdminConfig,
    @Optional() private readonly clock: Clock = new SystemClock(),
  ) {
    this.idleMs = config.adminSessionIdleMinutes * 60_000;
    this.maxMs = config.adminSessionMaxHours * 3_600_000;
  }

  /** How long a session may last in all, in seconds (the cookie's Max-Age). */
  get maxAgeSeconds(): number {
    return this.maxMs / 1000;
  }

  /**
   * Starts a session for an admin token; returns the id for the cookie (exists nowhere else).
   * The rows of sessions that have ended go first, so the table holds live sessions only.
   */
  async start(tokenId: bigint): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.repository.deleteEnded(now, new Date(now.getTime() - this.idleMs));
    await this.repository.insert({
      idHash: hashOf(id),
      adminTokenId: tokenId,
      createdAt: now,
      endsAt: new Date(now.getTime() + this.maxMs),
    });
    return id;
  }

  /**
   * The live session a cookie's id names, or null: unknown, ended (idle, over its lifetime: then
   * deleted) or of a revoked token. A live session's last use becomes now.
   */
  async check(id: string): Promise<AdminSession | null> {
    if (!SESSION_ID.test(id)) return null;
    const idHash = hashOf(id);
    const row = await this.repository.find(idHash);
    if (row === null) return null;
    const now = this.clock.now().getTime();
    if (row.token.revokedAt !== null || now >= row.endsAt.getTime() || now - row.lastSeenAt.getTime() >= this.idleMs) {
      await this.repository.delete(idHash);
      return null;
    }
    await this.repository.touch(idHash, new Date(now));
    return { tokenId: row.adminTokenId, tokenName: row.token.name };
  }

  /** Ends a session (sign-out); an unknown id is a no-op. */
  async end(id: string): Promise<void> {
    if (SESSION_ID.test(id)) await this.repository.delete(hashOf(id));
  }
}
