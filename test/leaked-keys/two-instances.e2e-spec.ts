import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { startTestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { createTestDatabase, describeIfPostgres, type TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { describeWithRedis, dropRedisKeys, redisPrefix, redisUrl } from '../support/redis-env.js';
import { waitFor } from '../support/wait-for.js';
import { forgedKey } from './support.js';

describeIfPostgres('a reported key across two instances (postgres)', () => {
  let db: TestDatabase;
  let first: NestExpressApplication;
  let second: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    first = await startTestApp(db);
    second = await startTestApp(db);
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await db?.drop();
  });

  it('is refused by the other instance within 5 s of its report', async () => {
    const { key } = await first.get(ApiKeysService).create({ name: 'leaked', plan: 'free' }, TEST_ACTOR);
    const use = () => request(second.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`);
    expect((await use()).status).toBe(200); // cached as valid on the second instance
    const res = await request(first.getHttpServer())
      .post('/v1/credentials/revoke')
      .send({ credentials: [key] });
    expect(res.status).toBe(202);
    const refused = await waitFor(
      async () => {
        const answer = await use();
        return answer.status === 401 ? answer : undefined;
      },
      { what: 'the second instance to refuse the reported key', timeoutMs: 5_000 },
    );
    expectErrorBody(refused, 401, 'invalid_api_key');
  });
});

describeWithRedis('the hourly budget of reports across two instances sharing Redis', () => {
  const prefix = redisPrefix('leaked-keys');
  let db: TestDatabase;
  let first: NestExpressApplication;
  let second: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase(process.env.DATABASE_URL ? 'postgres' : 'embedded');
    const env = { REDIS_URL: redisUrl() as string, RATE_LIMIT_PREFIX: prefix };
    first = await startTestApp(db, { env });
    second = await startTestApp(db, { env });
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await db?.drop();
    await dropRedisKeys(prefix);
  });

  it('holds across instances: 30 reports on each, then the 61st is refused by either', async () => {
    const report = (app: NestExpressApplication) =>
      request(app.getHttpServer())
        .post('/v1/credentials/revoke')
        .send({ credentials: [forgedKey(1)] });
    for (let i = 0; i < 30; i++) {
      expect((await report(first)).status).toBe(202);
      expect((await report(second)).status).toBe(202);
    }
    expectErrorBody(await report(first), 429, 'rate_limit_exceeded');
    expectErrorBody(await report(second), 429, 'rate_limit_exceeded');
  });
});
