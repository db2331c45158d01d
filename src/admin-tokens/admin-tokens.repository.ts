import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import { WRITE_TRANSACTION } from '../database/transactions.js';
import type { Db } from '../audit/audit-log.repository.js';

/** An admin token as listed: never the token, never its hash. */
export interface AdminTokenInfo {
  id: bigint;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const INFO_FIELDS = {
  id: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

/**
 * Every statement on admin_tokens. Through Prisma: issuing and revoking are rare, and the lookup
 * runs once per admin request, never on the public API's path.
 */
@Injectable()
export class AdminTokensRepository {
  constructor(private readonly prisma: PrismaService) {}

  async transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, WRITE_TRANSACTION);
  }

  async insert(data: { name: string; prefix: string; hash: string; createdAt: Date }, tx: Db): Promise<AdminTokenInfo> {
    return tx.adminToken.create({ data, select: INFO_FIELDS });
  }

  async findByName(name: string, tx: Db): Promise<{ id: bigint } | null> {
    return tx.adminToken.findUnique({ where: { name }, select: { id: true } });
  }

  /** Every token, revoked ones included, in order of creation. */
  async list(): Promise<AdminTokenInfo[]> {
    return this.prisma.adminToken.findMany({ select: INFO_FIELDS, orderBy: { id: 'asc' } });
  }

  async findInfo(id: bigint, tx: Db): Promise<AdminTokenInfo | null> {
    return tx.adminToken.findUnique({ where: { id }, select: INFO_FIELDS });
  }

  /** Revokes the token at `at` unless it is revoked already; whether it did. */
  async revoke(id: bigint, at: Date, tx: Db): Promise<boolean> {
    const { count } = await tx.adminToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
    return count === 1;
  }

  /** The live (unrevoked) token with this hash. */
  async findLiveByHash(hash: string): Promise<AdminTokenInfo | null> {
    return this.prisma.adminToken.findFirst({ where: { hash, revokedAt: null }, select: INFO_FIELDS });
  }

  async touch(id: bigint, at: Date): Promise<void> {
    await this.prisma.adminToken.update({ where: { id }, data: { lastUsedAt: at }, select: { id: true } });
  }
}
