import { Injectable } from '@nestjs/common';
import type { Db } from '../audit/audit-log.repository.js';
import { PrismaService } from '../database/prisma.service.js';
import { WRITE_TRANSACTION } from '../database/transactions.js';

/** An endpoint as stored (its secrets sealed). */
export interface EndpointRow {
  id: bigint;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface DeliveryRow {
  id: bigint;
  endpointId: bigint;
  messageId: string;
  event: string;
  payload: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type EndpointChange = Partial<Pick<EndpointRow, 'url' | 'events' | 'description' | 'enabled'>>;

/** Every statement on webhook_endpoints and webhook_deliveries. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly prisma: PrismaService) {}

  async transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, WRITE_TRANSACTION);
  }

  async anyEnabled(): Promise<boolean> {
    return (await this.prisma.webhookEndpoint.count({ where: { enabled: true }, take: 1 })) > 0;
  }

  /** The enabled endpoints subscribed to `event`. */
  async subscribed(event: string, db: Db = this.prisma): Promise<{ id: bigint }[]> {
    return db.webhookEndpoint.findMany({
      where: { enabled: true, events: { has: event } },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
  }

  async insert(data: Omit<EndpointRow, 'id' | 'createdAt' | 'updatedAt'>, db: Db): Promise<EndpointRow> {
    return db.webhookEndpoint.create({ data });
  }

  async list(): Promise<EndpointRow[]> {
    return this.prisma.webhookEndpoint.findMany({ orderBy: { id: 'asc' } });
  }

  async find(id: bigint, db: Db = this.prisma): Promise<EndpointRow | null> {
    return db.webhookEndpoint.findUnique({ where: { id } });
  }

  async lock(id: bigint, db: Db): Promise<EndpointRow | null> {
    const locked = await db.$queryRaw<
      { id: bigint }[]
    >`SELECT "id" FROM "webhook_endpoints" WHERE "id" = ${id} FOR UPDATE`;
    return locked.length === 0 ? null : this.find(id, db);
  }

  async update(
    id: bigint,
    data: EndpointChange & Partial<Pick<EndpointRow, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>>,
    now: Date,
    db: Db,
  ): Promise<EndpointRow> {
    return db.webhookEndpoint.update({ where: { id }, data: { ...data, updatedAt: now } });
  }

  async delete(id: bigint, db: Db): Promise<void> {
    await db.webhookEndpoint.delete({ where: { id } });
  }

  async insertDelivery(
    data: { endpointId: bigint; messageId: string; event: string; payload: string; nextAttemptAt: Date },
    db: Db,
  ): Promise<DeliveryRow> {
    return db.webhookDelivery.create({ data });
  }

  async findDelivery(id: bigint, db: Db = this.prisma): Promise<DeliveryRow | null> {
    return db.webhookDelivery.findUnique({ where: { id } });
  }

  /** Up to `limit` deliveries of an endpoint with ids below `before`, newest first. */
  async deliveries(endpointId: bigint, limit: number, before?: bigint): Promise<DeliveryRow[]> {
    return this.prisma.webhookDelivery.findMany({
      where: { endpointId, ...(before === undefined ? {} : { id: { lt: before } }) },
      orderBy: { id: 'desc' },
      take: limit,
    });
  }

  /** Records an attempt of a delivery that had `attempts` before it; false when another got there first. */
  async recordAttempt(
    id: bigint,
    attempts: number,
    data: Pick<DeliveryRow, 'state' | 'lastStatus' | 'lastError' | 'nextAttemptAt'>,
    now: Date,
    db: Db,
  ): Promise<boolean> {
    const { count } = await db.webhookDelivery.updateMany({
      where: { id, attempts, state: 'pending' },
      data: { ...data, attempts: attempts + 1, updatedAt: now },
    });
    return count === 1;
  }

  /** A failed delivery back to pending; null when it is not failed (or not there). */
  async reopen(id: bigint, endpointId: bigint, now: Date, db: Db): Promise<DeliveryRow | null> {
    const { count } = await db.webhookDelivery.updateMany({
      where: { id, endpointId, state: 'failed' },
      data: { state: 'pending', nextAttemptAt: now, updatedAt: now },
    });
    return count === 0 ? null : this.findDelivery(id, db);
  }

  /** How many deliveries are pending, and since when the oldest is. */
  async pendingStats(): Promise<{ depth: number; oldest: Date | null }> {
    const stats = await this.prisma.webhookDelivery.aggregate({
      where: { state: 'pending' },
      _count: { _all: true },
      _min: { createdAt: true },
    });
    return { depth: stats._count._all, oldest: stats._min.createdAt };
  }
}
