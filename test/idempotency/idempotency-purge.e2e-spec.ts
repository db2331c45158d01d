import type { NestExpressApplication } from '@nestjs/platform-express';
import pg from 'pg';
import { PrismaService } from '../../src/database/prisma.service.js';
import { PURGE_BATCH } from '../../src/idempotency/idempotency-keys.repository.js';
import { IdempotencyService } from '../../src/idempotency/idempotency.service.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';

/**
 * The purge of expired Idempotency-Keys keeps pace with any rate of creates (a round deletes
 * every key expired when it started, however many), and instances purging at once take
 * disjoint batches (FOR UPDATE SKIP LOCKED): neither waits on rows the other is deleting, and
 * together they delete each key once.
 */
describeEachDatabase('purge of expired Idempotency-Keys on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const clock = new FakeClock(new Date('2026-11-22T12:00:00Z'));

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const prisma = () => app.get(PrismaService);
  const count = () => prisma().idempotencyKey.count();

  /** `expired` keys that expired an hour ago and `live` keys that expire in an hour. */
  async function seed(expired: number, live: number, prefix: string): Promise<void> {
    const now = clock.now();
    await prisma().$executeRaw`
      INSERT INTO "idempotency_keys" ("api_key_id", "key", "fingerprint", "state", "claim_token", "claimed_at", "created_at", "expires_at")
      SELECT 1, ${prefix} || n, repeat('0', 64), 'in_flight', gen_random_uuid(), ${now}, ${now},
             CASE WHEN n <= ${expired} THEN ${new Date(now.getTime() - 3_600_000)}::timestamptz ELSE ${new Date(now.getTime() + 3_600_000)}::timestamptz END
      FROM generate_series(1, ${expired + live}) AS n`;
  }

  afterEach(async () => {
    await prisma().idempotencyKey.deleteMany({});
  });

  it(`deletes every expired key in one round, far more than ${PURGE_BATCH * 10} of them, and keeps the live ones`, async () => {
    const expired = PURGE_BATCH * 25 + 7;
    await seed(expired, 500, 'pace-');
    expect(await app.get(IdempotencyService).purgeExpired()).toBe(expired);
    expect(await count()).toBe(500);
    expect(await prisma().idempotencyKey.count({ where: { expiresAt: { lte: clock.now() } } })).toBe(0);
    expect(await app.get(IdempotencyService).purgeExpired()).toBe(0);
  }, 120_000);

  if (kind === 'postgres') {
    it('leaves rows another purger holds, without waiting for it, and deletes all the others', async () => {
      await seed(PURGE_BATCH * 3, 10, 'held-');
      // Another instance's batch: an open transaction holding 100 expired rows.
      const other = new pg.Client({ connectionString: db.env.DATABASE_URL });
      await other.connect();
      try {
        await other.query('BEGIN');
        const held = `SELECT key FROM idempotency_keys WHERE expires_at <= $1 ORDER BY key LIMIT 100`;
        await other.query(`${held} FOR UPDATE`, [clock.now()]);
        // Without SKIP LOCKED this purge would wait for that transaction, which never ends
        // while the test awaits it.
        expect(await app.get(IdempotencyService).purgeExpired()).toBe(PURGE_BATCH * 3 - 100);
        expect((await other.query(`DELETE FROM idempotency_keys WHERE key IN (${held})`, [clock.now()])).rowCount).toBe(
          100,
        );
        await other.query('COMMIT');
      } finally {
        await other.end();
      }
      expect(await count()).toBe(10);
    });

    it('two purgers at once both finish and delete each expired key once between them', async () => {
      const expired = PURGE_BATCH * 12;
      await seed(expired, 10, 'pair-');
      const service = app.get(IdempotencyService);
      const [a, b] = await Promise.all([service.purgeExpired(), service.purgeExpired()]);
      expect(a + b).toBe(expired);
      expect(await count()).toBe(10);
    });
  }
});
