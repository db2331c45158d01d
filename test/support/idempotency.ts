// Requests that carry an Idempotency-Key, as the specs of creates send them.
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

/**
 * POST /v1/pets with `body` as JSON, authorized by `apiKey`, with an Idempotency-Key header
 * when `idempotencyKey` is given (an empty one too).
 */
export function postPet(app: INestApplication, apiKey: string, body: string, idempotencyKey?: string): request.Test {
  const req = request(app.getHttpServer())
    .post('/v1/pets')
    .set('Authorization', `Bearer ${apiKey}`)
    .set('Content-Type', 'application/json');
  if (idempotencyKey !== undefined) req.set('Idempotency-Key', idempotencyKey);
  return req.send(body);
}

/** The Idempotency-Key header line of a raw request (test/support/raw-http.ts). */
export const idempotencyKeyLine = (idempotencyKey: string) => `Idempotency-Key: ${idempotencyKey}`;
