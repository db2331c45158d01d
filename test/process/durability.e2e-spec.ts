import { issueApiKeyIn } from '../support/api-keys.js';
import { RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Nothing accepted is lost: the built service is killed with SIGKILL (no shutdown, no flush)
 * in the middle of a stream of concurrent creates, then started again on the same database.
 * Every create that was answered 201 must be there, exactly as answered; creates that got no
 * answer may or may not have happened, but a retry with their Idempotency-Key never makes a
 * second animal.
 */
const WORKERS = 12;
/** Creates answered before the kill, at least (the stream keeps going while we kill). */
const ANSWERED_BEFORE_KILL = 150;

interface Sent {
  body: string;
  idempotencyKey?: string;
  status?: number;
  text?: string;
}

describeEachDatabase('durability across SIGKILL on %s', (kind) => {
  let db: TestDatabase;
  let svc: RunningService | undefined;
  let key: string;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    key = (await issueApiKeyIn(db)).key;
  }, 60_000);

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    await db?.drop();
  });

  const start = async () => {
    const s = await startService({ ...db.env, LOG_LEVEL: 'warn' }, 60_000);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    return s;
  };

  function create(url: string, sent: Sent): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
    if (sent.idempotencyKey) headers['idempotency-key'] = sent.idempotencyKey;
    return fetch(`${url}/v1/pets`, { method: 'POST', headers, body: sent.body }).then(
      async (res) => {
        const text = await res.text();
        sent.status = res.status;
        sent.text = text;
      },
      () => {}, // no answer: the connection died with the process
    );
  }

  it('keeps every create answered 201, complete and exact, and never doubles a retried one', async () => {
    svc = await start();
    const sent: Sent[] = [];
    let answered = 0;
    let killed = false;
    let n = 0;
    const url = svc.url;
    const worker = async (w: number) => {
      while (!killed) {
        const i = n++;
        const s: Sent = {
          // int64 values at the edge, every status, names that need escaping: "complete" means all of it.
          body: JSON.stringify({
            name: `w${w} #${i} "durable" 🐾`,
            status: ['available', 'pending', 'sold'][i % 3],
          }).replace(/}$/, `,"categoryId":${i % 2 === 0 ? '9223372036854775807' : String(1000 + i)}}`),
          idempotencyKey: i % 2 === 0 ? `durable-${kind}-${i}` : undefined,
        };
        sent.push(s);
        await create(url, s);
        if (s.status === 201) answered++;
      }
    };
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
    try {
      await waitFor(() => answered >= ANSWERED_BEFORE_KILL, {
        what: `${ANSWERED_BEFORE_KILL} creates answered 201`,
        timeoutMs: 60_000,
        intervalMs: 10,
      });
    } finally {
      // Mid-stream: requests are being read, inserted and committed at this very moment.
      svc.child.kill('SIGKILL');
      await svc.exited;
      killed = true;
      await Promise.all(workers);
    }
    svc = undefined;

    const ok = sent.filter((s) => s.status === 201);
    const unanswered = sent.filter((s) => s.status === undefined);
    expect(ok.length).toBeGreaterThanOrEqual(ANSWERED_BEFORE_KILL);
    // Nothing but 201s was answered: a failure here would be a bug, not the kill.
    expect(sent.filter((s) => s.status !== undefined && s.status !== 201)).toEqual([]);

    svc = await start();
    const again = svc.url;
    for (const s of ok) {
      const id = /^\{"id":(\d+),/.exec(s.text!)![1];
      const res = await fetch(`${again}/v1/pets/${id}`, { headers: { authorization: `Bearer ${key}` } });
      expect({ id, status: res.status, text: await res.text() }).toEqual({ id, status: 200, text: s.text });
    }
    // The Idempotency-Key records survived with their animals: a retry replays, creating nothing.
    for (const s of ok.filter((x) => x.idempotencyKey)) {
      const retry: Sent = { ...s, status: undefined, text: undefined };
      await create(again, retry);
      expect({ key: s.idempotencyKey, status: retry.status, text: retry.text }).toEqual({
        key: s.idempotencyKey,
        status: 201,
        text: s.text,
      });
    }
    // A create that got no answer is safe to retry with its key: it ends with exactly one animal.
    const all = await listAll(again);
    for (const s of unanswered.filter((x) => x.idempotencyKey)) {
      const retry: Sent = { ...s };
      await create(again, retry);
      // 409 while a claim left by the killed process is younger than the in-flight bound.
      expect([201, 409]).toContain(retry.status);
      const name = (JSON.parse(s.body) as { name: string }).name;
      const after = (await listAll(again)).filter((p) => p.name === name);
      expect(after.length).toBeLessThanOrEqual(1);
      if (retry.status === 201) expect(after).toHaveLength(1);
    }
    expect(all.length).toBeGreaterThanOrEqual(ok.length);
    expect(all.length).toBeLessThanOrEqual(ok.length + unanswered.length);
    expect(await svc.stop('SIGTERM')).toBe(0);
    svc = undefined;
  }, 180_000);

  async function listAll(url: string): Promise<{ id: number; name: string }[]> {
    const out: { id: number; name: string }[] = [];
    let next: string | undefined = `${url}/v1/pets?limit=100`;
    while (next) {
      const res: Response = await fetch(next, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      out.push(...((await res.json()) as { id: number; name: string }[]));
      const link = res.headers.get('link');
      const m = link ? /^<[^>]*\/v1\/pets\?([^>]+)>; rel="next"$/.exec(link) : null;
      next = m ? `${url}/v1/pets?${m[1]}` : undefined;
    }
    return out;
  }
});
