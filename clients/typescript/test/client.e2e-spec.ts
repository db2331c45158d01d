import type { NestExpressApplication } from '@nestjs/platform-express';
import { FakeClock, issueApiKey, startTestApp } from '../../../test/support/app.js';
import { createTestDatabase, TestDatabase } from '../../../test/support/databases.js';
import {
  AnimalStoreClient,
  AnimalStoreError,
  type AnimalStoreClientOptions,
  type DeprecationNotice,
} from '../src/index.js';
import { LoopbackProxy, unavailable, type Action, type Seen } from './support/loopback-proxy.js';

const INT64_MAX = 9223372036854775807n;

/**
 * The client against the real service: the production app (test/support/app.ts) listening on a
 * real port, and for injected failures a loopback proxy in front of it. Waits are never real:
 * the client's sleep is replaced by one that records the delay it was asked for (and, for the
 * real 429, moves the service's clock forward by as much).
 */
describe('TypeScript client against the real service', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let origin: string;
  let key: string;
  const clock = new FakeClock(new Date('2027-04-01T12:00:10Z'));
  const proxies: LoopbackProxy[] = [];

  // Long: the first suite of a clean checkout also builds the migrated database template (.tmp).
  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { clock });
    await app.listen(0, '127.0.0.1');
    origin = await app.getUrl();
    key = await issueApiKey(app);
  }, 180_000);

  afterAll(async () => {
    for (const p of proxies) await p.stop();
    await app?.close();
    await db?.drop();
  });

  /** A client whose waits are recorded, not waited. */
  function client(options: Partial<AnimalStoreClientOptions> = {}): { client: AnimalStoreClient; delays: number[] } {
    const delays: number[] = [];
    const c = new AnimalStoreClient({
      baseUrl: `${origin}/v1`,
      apiKey: key,
      sleep: async (ms) => {
        delays.push(ms);
      },
      random: () => 0.5,
      onDeprecation: () => {},
      ...options,
    });
    return { client: c, delays };
  }

  async function proxied(
    decide: (seen: Seen, n: number) => Action,
  ): Promise<{ proxy: LoopbackProxy; baseUrl: string }> {
    const proxy = new LoopbackProxy(origin, decide);
    proxies.push(proxy);
    return { proxy, baseUrl: `${await proxy.start()}/v1` };
  }

  it('creates and fetches with exact int64 ids, bigint in and out', async () => {
    const { client: c } = client();
    const pet = await c.createPet({ name: 'Int64', categoryId: INT64_MAX });
    expect(typeof pet.id).toBe('bigint');
    expect(pet).toEqual({ id: pet.id, name: 'Int64', categoryId: INT64_MAX, status: 'available' });
    expect(await c.getPet(pet.id)).toEqual(pet);
    expect(c.lastRateLimit).toEqual(
      expect.objectContaining({ limit: expect.any(Number), remaining: expect.any(Number), window: expect.any(String) }),
    );
  });

  it('reports an exposed key with revokeCredentials: the service revokes it', async () => {
    const exposed = await issueApiKey(app);
    const { client: reporter } = client();
    expect(await reporter.revokeCredentials([exposed, 'not a key'])).toEqual({ received: 2 });
    const { client: holder } = client({ apiKey: exposed });
    await expect(holder.listPets()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('lists one page, and iterates every page by following Link rel="next"', async () => {
    const requests: string[] = [];
    const { client: c } = client({
      fetch: (input) => {
        requests.push((input as Request).url);
        return fetch(input);
      },
    });
    const created = [];
    for (let i = 0; i < 5; i++)
      created.push(await c.createPet({ name: `Sold ${i}`, categoryId: BigInt(i + 1), status: 'sold' }));
    requests.length = 0;

    const first = await c.listPets({ status: 'sold', limit: 2 });
    expect(first.pets).toEqual(created.slice(0, 2));
    expect(first.next).toEqual({ limit: 2, status: 'sold', cursor: expect.any(String) });

    const all = [];
    for await (const pet of c.allPets({ status: 'sold', limit: 2 })) all.push(pet);
    expect(all).toEqual(created);
    // 1 + 3 pages of 2, 2, 1; the last has no next link.
    expect(requests).toHaveLength(4);
    expect(requests[3]).toMatch(/\/v1\/pets\?limit=2&status=sold&cursor=/);
  });

  it('throws AnimalStoreError with code, status, message, details, request id and rate-limit state', async () => {
    const requestIds: (string | null)[] = [];
    const { client: c } = client({
      fetch: async (input) => {
        const res = await fetch(input);
        requestIds.push(res.headers.get('x-request-id'));
        return res;
      },
    });
    const notFound = await c.getPet(INT64_MAX).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(AnimalStoreError);
    expect(notFound).toMatchObject({ code: 'not_found', status: 404, details: [], requestId: requestIds[0] });
    expect((notFound as AnimalStoreError).message).toMatch(/No animal has id 9223372036854775807/);
    // The test key allows 1,000,000,000 a minute and a day: the day, which holds every request the
    // minute does, is the window with the least left.
    expect((notFound as AnimalStoreError).rateLimit).toEqual(
      expect.objectContaining({ limit: 1_000_000_000, resetAt: expect.any(Date), window: 'day' }),
    );

    const invalid = (await c.createPet({ name: ' ', categoryId: 1n }).catch((e: unknown) => e)) as AnimalStoreError;
    expect(invalid).toMatchObject({
      code: 'validation_failed',
      status: 400,
      details: [expect.objectContaining({ field: 'name' })],
    });
    expect(invalid.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIds).toHaveLength(2); // a 400 is not retried
  });

  it('tells once that getPet is deprecated, naming the sunset date from the Sunset header', async () => {
    const notices: DeprecationNotice[] = [];
    const { client: c } = client({ onDeprecation: (n) => notices.push(n) });
    const pet = await c.createPet({ name: 'Old', categoryId: 1n });
    await c.getPet(pet.id);
    await c.getPet(pet.id);
    expect(notices).toHaveLength(1);
    expect(notices[0].sunset).toEqual(new Date('2030-12-05T00:00:00Z'));
    expect(notices[0].message).toContain('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(notices[0].successor).toBe('https://api.example.test/v1/pets');
  });

  it('retries a create across a 503 that lost its response: one Idempotency-Key, one animal', async () => {
    const { proxy, baseUrl } = await proxied((seen, n) =>
      n === 1 ? { forwardThenAnswer: unavailable('1') } : { forward: true },
    );
    const { client: c, delays } = client({ baseUrl });
    const pet = await c.createPet({ name: 'Lost response', categoryId: 42n, status: 'pending' });

    expect(delays).toEqual([1000]); // Retry-After: 1
    expect(proxy.seen.map((s) => s.method)).toEqual(['POST', 'POST']);
    const keys = proxy.seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^"[0-9a-f-]{36}"$/); // quoted, the form the service prefers
    expect(keys[1]).toBe(keys[0]);
    // The first attempt created it; the retry was answered with that creation, not a new one.
    const stored = [];
    for await (const p of client().client.allPets({ status: 'pending', limit: 100 }))
      if (p.name === 'Lost response') stored.push(p);
    expect(stored).toEqual([pet]);
  });

  it('makes a new Idempotency-Key for each createPet call', async () => {
    const { proxy, baseUrl } = await proxied(() => ({ forward: true }));
    const { client: c } = client({ baseUrl });
    await c.createPet({ name: 'Twin', categoryId: 5n });
    await c.createPet({ name: 'Twin', categoryId: 5n });
    const [a, b] = proxy.seen.map((s) => s.headers['idempotency-key']);
    expect(a).not.toBe(b);
  });

  it('waits Retry-After of a real 429, then succeeds', async () => {
    const free = await issueApiKey(app, { plan: 'free' });
    clock.set('2027-04-01T12:00:10Z');
    const { client: c, delays } = client({
      apiKey: free,
      // The service's clock moves on by the wait the client asks for.
      sleep: async (ms) => {
        delays.push(ms);
        clock.set(new Date(clock.now().getTime() + ms));
      },
    });
    for (let i = 0; i < 60; i++) await c.listPets({ limit: 1 });
    expect(c.lastRateLimit).toMatchObject({ limit: 60, remaining: 0, window: 'minute' });
    const page = await c.listPets({ limit: 1 });
    expect(delays).toEqual([50_000]); // the 61st was refused until 12:01:00
    expect(page.rateLimit).toMatchObject({ limit: 60, remaining: 59 });
  });

  it('backs off exponentially with jitter on repeated refusals, and stops after maxAttempts', async () => {
    const { proxy, baseUrl } = await proxied(() => ({ answer: unavailable('1', 'lb-1') }));
    const { client: c, delays } = client({ baseUrl, retry: { maxAttempts: 4, baseDelayMs: 2000 } });
    const err = (await c.listPets().catch((e: unknown) => e)) as AnimalStoreError;
    expect(err).toBeInstanceOf(AnimalStoreError);
    expect(err).toMatchObject({ code: 'service_unavailable', status: 503, requestId: 'lb-1' });
    expect(err.rateLimit).toBeUndefined(); // the balancer's answer has no rate-limit headers
    expect(proxy.seen).toHaveLength(4);
    // Retry-After first; then at least Retry-After and at least the backoff, whose cap doubles
    // (4 s, 8 s), half of it jitter: random() = 0.5 gives three quarters of each cap.
    expect(delays).toEqual([1000, 3000, 6000]);
  });

  it('does not wait out a Retry-After longer than maxRetryAfterMs', async () => {
    const { proxy, baseUrl } = await proxied(() => ({ answer: unavailable('900') }));
    const { client: c, delays } = client({ baseUrl });
    await expect(c.listPets()).rejects.toMatchObject({ status: 503, rateLimit: undefined });
    expect(delays).toEqual([]);
    expect(proxy.seen).toHaveLength(1);
  });

  it('is abortable while it waits', async () => {
    const { proxy, baseUrl } = await proxied(() => ({ answer: unavailable('1') }));
    const controller = new AbortController();
    const { client: c } = client({
      baseUrl,
      sleep: (ms, signal) => {
        controller.abort();
        return new Promise((_resolve, reject) => (signal?.aborted ? reject(signal.reason) : undefined));
      },
    });
    await expect(c.createPet({ name: 'Aborted', categoryId: 1n }, { signal: controller.signal })).rejects.toMatchObject(
      { name: 'AbortError' },
    );
    expect(proxy.seen).toHaveLength(1);
  });

  it('retries a GET after a dropped connection', async () => {
    const pet = await client().client.createPet({ name: 'Behind a reset', categoryId: 9n, status: 'pending' });
    const { proxy, baseUrl } = await proxied((_seen, n) => (n === 1 ? { reset: true } : { forward: true }));
    const { client: c, delays } = client({ baseUrl });
    const page = await c.listPets({ status: 'pending', limit: 100 });
    expect(page.pets).toContainEqual(pet);
    expect(proxy.seen).toHaveLength(2);
    expect(delays).toEqual([375]); // no Retry-After: the backoff alone (500 ms cap, jitter 0.5)
  });
});
