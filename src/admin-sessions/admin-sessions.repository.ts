import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';

/** A stored session with the state of the admin token it belongs to. */
export interface AdminSessionRow {
  adminTokenId: bigint;
  lastSeenAt: Date;
  endsAt: Date;
  token: { name: string; revokedAt: Date | null };
}

/** Every statement on admin_sessions. */
@Injectable()
export class AdminSessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async insert(data: { idHash: string; adminTokenId: bigint; createdAt: Date; endsAt: Date }): Promise<void> {
    await this.prisma.adminSession.create({
      data: { ...data, lastSeenAt: data.createdAt },
      select: { idHash: true },
    });
  }

  /** The session with this hash, joined with its token's name and revocation. */
  async find(idHash: string): Promise<AdminSessionRow | null> {
    const row = await this.prisma.adminSession.findUnique({
      where: { idHash },
      select: {
        adminTokenId: true,
        lastSeenAt: true,
        endsAt: true,
        adminToken: { select: { name: true, revokedAt: true } },
      },
    });
    return (
      row && { adminTokenId: row.adminTokenId, lastSeenAt: row.lastSeenAt, endsAt: row.endsAt, token: row.adminToken }
    );
  }

  async touch(idHash: string, at: Date): Promise<void> {
    await this.prisma.adminSession.updateMany({ where: { idHash }, data: { lastSeenAt: at } });
  }

  async delete(idHash: string): Promise<void> {
    await this.prisma.adminSession.deleteMany({ where: { idHash } });
  }

  /** Deletes the sessions that ended before `at` (over their lifetime, or idle since `idleBefore`). */
  async deleteEnded(at: Date, idleBefore: Date): Promise<number> {
    const { count } = await this.prisma.adminSession.deleteMany({
      where: { OR: [{ endsAt: { lte: at } }, { lastSeenAt: { lte: idleBefore } }] },
    });
    return count;
  }
}
