import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { waitFor } from '../support/wait-for.js';

/** One HTTP exchange's outcome: a status, or the network error that took its place. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: http.Agent;
  /** Source address of the connection (a client other than 127.0.0.1 on loopback). */
  localAddress?: string;
  timeoutMs?: number;
}

/** One HTTP request; rejects on a network error or when no answer comes within timeoutMs. */
export function send(url: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: options.agent ?? false,
        localAddress: options.localAddress,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 10_000, () =>
      req.destroy(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** What a load run counts. */
export interface LoadFigures {
  /** HTTP requests sent, retries of creates included. */
  sent: number;
  /** Requests that got no 2xx: a network error, a 5xx from the balancer or the service, a 409… */
  failed: number;
  /** Operations (a list, a get, or a create with all its retries) that ended without success. */
  operationsFailed: number;
  operations: number;
  /** Creates answered 201: name → id. */
  acknowledged: Map<string, string>;
  /** Creates given up (their last answer was not a 201): their names. */
  unacknowledged: string[];
  /** The first few failures, for the report. */
  samples: string[];
  /** The slowest exchange, in ms (a retry by the balancer shows here). */
  slowestMs: number;
}

export interface LoadOptions {
  /** The balancer's base URL. */
  url: string;
  apiKey: string;
  /** Names of created pets start with this (one prefix per scenario, to find them in the database). */
  namePrefix: string;
  /** Concurrent clients, each on its own kept-alive connection to the balancer. */
  concurrency: number;
  /** Requests per second over all clients (a steady load, not a flood). */
  ratePerSecond: number;
  /** No new operation starts after this many, nor after this long: every run is bounded. */
  maxOperations: number;
  maxDurationMs: number;
  /** How long one create may keep retrying (same key, same body, after Retry-After: docs/api.md, "Idempotent retries"). */
  createRetryBudgetMs: number;
}

/**
 * Steady traffic through the balancer, as well-behaved clients send it: lists (with a status
 * filter now and then), gets of known pets, creates with an Idempotency-Key, retried with the
 * same key and body after a dropped connection, a 5xx, a 409 or a 429 (docs/api.md, "Idempotent
 * retries"), and a few creates without one, never retried. Lists and gets are not retried
 * either, so every failed exchange is counted as it happened.
 */
export class Load {
  readonly figures: LoadFigures = {
    sent: 0,
    failed: 0,
    operationsFailed: 0,
    operations: 0,
    acknowledged: new Map(),
    unacknowledged: [],
    samples: [],
    slowestMs: 0,
  };
  /** Requests sent and not yet answered, at this instant. */
  inFlight = 0;
  /** Operations finished, successfully or not: progress to wait on. */
  completed = 0;
  private stopping = false;
  private readonly agents: http.Agent[] = [];
  private readonly knownIds: string[] = [];
  private nextSlot = 0;
  private creates = 0;
  private finished?: Promise<void>;

  constructor(private readonly options: LoadOptions) {}

  /** Starts the clients; returns at once. */
  start(seedIds: string[] = []): void {
    this.knownIds.push(...seedIds);
    const started = Date.now();
    this.nextSlot = started;
    const deadline = started + this.options.maxDurationMs;
    const workers: Promise<void>[] = [];
    for (let i = 0; i < this.options.concurrency; i++) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      this.agents.push(agent);
      workers.push(this.worker(agent, deadline));
    }
    this.finished = Promise.all(workers).then(() => undefined);
  }

  /** Lets the operations under way finish (creates within their retry budget), then stops. */
  async stop(): Promise<LoadFigures> {
    this.stopping = true;
    await this.finished;
    for (const agent of this.agents) agent.destroy();
    return this.figures;
  }

  /** Resolves when `count` more operations have completed (or the run ended), polling progress. */
  async progress(count: number, timeoutMs = 30_000): Promise<void> {
    const target = this.completed + count;
    const reached = await waitFor(() => (this.stopping ? 'stopped' : this.completed >= target && 'reached'), {
      what: `the load to reach ${target} operations`,
      timeoutMs,
      intervalMs: 20,
    });
    if (reached === 'stopped') throw new Error(`load stopped before ${target} operations (at ${this.completed})`);
  }

  private async worker(agent: http.Agent, deadline: number): Promise<void> {
    while (!this.stopping && Date.now() < deadline && this.figures.operations < this.options.maxOperations) {
      // Pacing: each operation takes the next slot of the steady rate; a client that fell behind
      // (a stall) carries on from now rather than catching up in a burst.
      this.nextSlot = Math.max(this.nextSlot + 1000 / this.options.ratePerSecond, Date.now());
      const wait = this.nextSlot - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (this.stopping) break;
      this.figures.operations++;
      const roll = Math.random();
      let ok: boolean;
      if (roll < 0.4) ok = await this.list(agent);
      else if (roll < 0.65 && this.knownIds.length > 0) ok = await this.get(agent);
      else if (roll < 0.9) ok = await this.create(agent, true);
      else ok = await this.create(agent, false);
      if (!ok) this.figures.operationsFailed++;
      this.completed++;
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { Authorization: `Bearer ${this.options.apiKey}`, ...extra };
  }

  /** One exchange, counted; a network error comes back as status 0. */
  private async exchange(what: string, url: string, options: RequestOptions): Promise<Answer> {
    this.figures.sent++;
    this.inFlight++;
    const started = Date.now();
    let answer: Answer;
    try {
      answer = await send(url, options);
    } catch (err) {
      answer = { status: 0, headers: {}, body: (err as Error).message };
    } finally {
      this.inFlight--;
      this.figures.slowestMs = Math.max(this.figures.slowestMs, Date.now() - started);
    }
    if (answer.status < 200 || answer.status > 299) {
      this.figures.failed++;
      if (this.figures.samples.length < 10)
        this.figures.samples.push(`${what}: ${answer.status} ${answer.body.slice(0, 160)}`);
    }
    return answer;
  }

  private async list(agent: http.Agent): Promise<boolean> {
    const query = Math.random() < 0.25 ? '?limit=10&status=available' : '?limit=20';
    const answer = await this.exchange('list', `${this.options.url}/v1/pets${query}`, {
      agent,
      headers: this.headers(),
    });
    return answer.status === 200 && Array.isArray(JSON.parse(answer.body));
  }

  private async get(agent: http.Agent): Promise<boolean> {
    const id = this.knownIds[Math.floor(Math.random() * this.knownIds.length)];
    const answer = await this.exchange(`get ${id}`, `${this.options.url}/v1/pets/${id}`, {
      agent,
      headers: this.headers(),
    });
    return answer.status === 200 && (JSON.parse(answer.body) as { id: number }).id === Number(id);
  }

  /**
   * A create; with an Idempotency-Key it is retried as docs/api.md says, without one (as some
   * clients send it) it is sent once: a retry could store the pet twice.
   */
  private async create(agent: http.Agent, withKey: boolean): Promise<boolean> {
    const name = `${this.options.namePrefix}-${++this.creates}-${withKey ? 'k' : 'n'}-${randomUUID().slice(0, 8)}`;
    const headers = this.headers({
      'Content-Type': 'application/json',
      ...(withKey ? { 'Idempotency-Key': randomUUID() } : {}),
    });
    const body = JSON.stringify({ name, categoryId: 42 });
    const giveUp = Date.now() + this.options.createRetryBudgetMs;
    for (let attempt = 1; ; attempt++) {
      const answer = await this.exchange(`create ${name} (attempt ${attempt})`, `${this.options.url}/v1/pets`, {
        method: 'POST',
        agent,
        headers,
        body,
      });
      if (answer.status === 201) {
        const id = String((JSON.parse(answer.body) as { id: number }).id);
        this.figures.acknowledged.set(name, id);
        this.knownIds.push(id);
        return true;
      }
      // docs/api.md: a dropped connection, 409 in flight, 429 and 503 are retried with the same key
      // and body after Retry-After; so are the balancer's 502 and 504 (no answer from an
      // instance). Anything else is a client error, not retried.
      const retryable = withKey && (answer.status === 0 || [409, 429, 502, 503, 504].includes(answer.status));
      const retryAfterMs = Number(answer.headers['retry-after'] ?? 0) * 1000 || 200 * attempt;
      if (!retryable || Date.now() + retryAfterMs > giveUp) {
        this.figures.unacknowledged.push(name);
        return false;
      }
      await new Promise((r) => setTimeout(r, retryAfterMs));
    }
  }
}
