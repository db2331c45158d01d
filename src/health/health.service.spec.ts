import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { healthConfig, type HealthConfig } from '../config/health.config.js';
import type { Database } from '../database/database.js';
import { DATABASE } from '../database/prisma.tokens.js';
import type { SqlRunner } from '../database/sql-runner.js';
import { ShutdownService } from '../lifecycle/shutdown.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { DatabaseIndicator } from './database.indicator.js';
import { HealthService } from './health.service.js';
import { MigrationsIndicator } from './migrations.indicator.js';
import { RedisHealth } from './redis-health.js';
import { RedisIndicator } from './redis.indicator.js';

/**
 * A database whose `SELECT 1` waits for the test to answer it and which has applied no migration
 * (none is on disk unless the test writes one). `unreachable` fails every query; `lookupFails`
 * only the migrations' lookup.
 */
class FakeDatabase {
  readonly probes: { resolve: () => void; reject: (err: Error) => void }[] = [];
  unreachable?: Error;
  lookupFails?: Error;
  private readonly waiters: (() => void)[] = [];

  withRunner<T>(fn: (sql: SqlRunner) => Promise<T>): Promise<T> {
    return fn({
      query: async <R>(sql: string): Promise<R[]> => {
        if (this.unreachable) throw this.unreachable;
        if (sql.includes('to_regclass')) {
          if (this.lookupFails) throw this.lookupFails;
          return [{ t: '_prisma_migrations' }] as R[];
        }
        if (sql !== 'SELECT 1') return [];
        await new Promise<void>((resolve, reject) => {
          this.probes.push({ resolve, reject });
          this.waiters.splice(0).forEach((w) => w());
        });
        return [{}] as R[];
      },
      exec: async () => {},
    });
  }

  /** Resolves once `count` probes have reached the database. */
  async probed(count: number): Promise<void> {
    while (this.probes.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

async function service(cacheMs: number) {
  const db = new FakeDatabase();
  const shutdown = { isShuttingDown: false };
  const metrics = { databaseError: jest.fn() };
  const health: HealthConfig = { readinessCacheMs: cacheMs, readinessTimeoutMs: 60_000 };
  const database = { migrationsDir: mkdtempSync(path.join(tmpdir(), 'migrations-')) };
  const moduleRef = await Test.createTestingModule({
    imports: [TerminusModule.forRoot({ logger: false })],
    providers: [
      HealthService,
      DatabaseIndicator,
      MigrationsIndicator,
      RedisIndicator,
      { provide: RedisHealth, useValue: { configured: false } },
      { provide: ShutdownService, useValue: shutdown },
      { provide: MetricsService, useValue: metrics },
      { provide: DATABASE, useValue: db as unknown as Database },
      { provide: healthConfig.token, useValue: health },
      { provide: databaseConfig.token, useValue: database as DatabaseConfig },
    ],
  })
    .setLogger({ log() {}, error() {}, warn() {} })
    .compile();
  return { health: moduleRef.get(HealthService), db, shutdown, metrics, migrationsDir: database.migrationsDir };
}

const READY = {
  status: 'ready',
  result: expect.objectContaining({
    status: 'ok',
    details: {
      database: expect.objectContaining({ status: 'up' }),
      migrations: expect.objectContaining({ status: 'up' }),
    },
  }),
};

describe('HealthService readiness', () => {
  it('runs one check for the probes that arrive while it is under way, and gives each its outcome', async () => {
    const { health, db } = await service(0);
    const first = health.readiness();
    const second = health.readiness();
    await db.probed(1);
    db.probes[0].resolve();
    expect(await first).toEqual(READY);
    expect(db.probes).toHaveLength(1);
    expect(await second).toEqual(READY);
  });

  it('reuses an outcome for READINESS_CACHE_MS, and checks again without a cache', async () => {
    const cached = await service(3_600_000);
    const answered = cached.health.readiness();
    await cached.db.probed(1);
    cached.db.probes[0].resolve();
    await answered;
    expect(await cached.health.readiness()).toEqual(READY);
    expect(cached.db.probes).toHaveLength(1);

    const uncached = await service(0);
    const one = uncached.health.readiness();
    await uncached.db.probed(1);
    uncached.db.probes[0].resolve();
    await one;
    const two = uncached.health.readiness();
    await uncached.db.probed(2);
    uncached.db.probes[1].resolve();
    expect(await two).toEqual(READY);
  });

  it('names a failed database without its details, and counts it', async () => {
    const { health, db, metrics } = await service(0);
    const answered = health.readiness();
    await db.probed(1);
    db.probes[0].reject(new Error('connect ECONNREFUSED 10.0.0.5:5432'));
    expect(await answered).toEqual({ status: 'not-ready', reasons: ['the database is unreachable'] });
    expect(metrics.databaseError).toHaveBeenCalledWith('unavailable');
  });

  it('names only the database when every query fails, not the migrations its check could not read', async () => {
    const { health, db, metrics } = await service(0);
    db.unreachable = new Error('connect ECONNREFUSED 10.0.0.5:5432');
    expect(await health.readiness()).toEqual({ status: 'not-ready', reasons: ['the database is unreachable'] });
    expect(metrics.databaseError).toHaveBeenCalledWith('unavailable');
  });

  it('names migrations not applied only when the database answers and one on disk is missing from it', async () => {
    const { health, db, migrationsDir, metrics } = await service(0);
    mkdirSync(path.join(migrationsDir, '20990101000000_next'));
    writeFileSync(path.join(migrationsDir, '20990101000000_next', 'migration.sql'), 'SELECT 1;');
    const answered = health.readiness();
    await db.probed(1);
    db.probes[0].resolve();
    expect(await answered).toEqual({ status: 'not-ready', reasons: ['database migrations are not applied'] });
    expect(metrics.databaseError).not.toHaveBeenCalled();
  });

  it('says the migrations could not be checked when only their lookup fails', async () => {
    const { health, db } = await service(0);
    db.lookupFails = new Error('permission denied for table _prisma_migrations');
    const answered = health.readiness();
    await db.probed(1);
    db.probes[0].resolve();
    expect(await answered).toEqual({ status: 'not-ready', reasons: ['database migrations could not be checked'] });
  });

  it('reports shutting down at once, over a cached ready outcome', async () => {
    const { health, db, shutdown } = await service(3_600_000);
    const answered = health.readiness();
    await db.probed(1);
    db.probes[0].resolve();
    expect(await answered).toEqual(READY);
    shutdown.isShuttingDown = true;
    expect(await health.readiness()).toEqual({ status: 'shutting-down' });
  });
});
