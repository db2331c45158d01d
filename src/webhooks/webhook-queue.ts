import { Logger } from '@nestjs/common';
import PgBoss from 'pg-boss';
import type { Db } from '../audit/audit-log.repository.js';

/** The pg-boss queue of delivery attempts: each job is one attempt of one delivery. */
export const DELIVERY_QUEUE = 'webhook-delivery';

export interface AttemptJob {
  /** webhook_deliveries.id, as text. */
  deliveryId: string;
  /** The attempts the delivery has had before this one: a job run twice makes its attempt once. */
  attempt: number;
}

/** Waits between tries to start the queue while the database does not answer. */
const START_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

/** A statement executor over the transaction of a change, for pg-boss's `db` option. */
function transactionExecutor(tx: Db): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      // pg sends objects as JSON; Prisma's raw queries want the text.
      const params = values.map((v) =>
        v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v,
      );
      return { rows: await tx.$queryRawUnsafe<unknown[]>(text, ...params) };
    },
  };
}

/**
 * pg-boss over the service's PostgreSQL, started only once an enabled endpoint exists, so a
 * service without webhooks does no queue work at all: `start` never throws and retries with
 * backoff while the database is down (the service starts and serves without it). Jobs can be
 * sent without this instance's queue having started (the schema exists once any instance
 * started it, which creating an endpoint ensures), inside the transaction of a change.
 */
export class WebhookQueue {
  private readonly logger = new Logger('Webhooks');
  private boss?: PgBoss;
  private starting?: Promise<boolean>;
  private stopped = false;
  private ran = false;
  private readonly sender: PgBoss;

  constructor(
    private readonly connectionString: string,
    private readonly handler: (job: AttemptJob) => Promise<void>,
  ) {
    // Used only to send with a caller's executor: never started, never connects.
    this.sender = new PgBoss({ connectionString, max: 1 });
    this.sender.on('error', (err: Error) => this.logger.warn(`webhook queue: ${err.message}`));
  }

  get started(): boolean {
    return this.boss !== undefined;
  }

  /** Whether the queue has run in this process (an enabled endpoint existed), stopped since or not. */
  get hasRun(): boolean {
    return this.ran;
  }

  /** Starts the queue once (its schema, the queue, this instance's worker); true when it runs. */
  async start(): Promise<boolean> {
    if (this.boss) return true;
    if (this.stopped) return false;
    this.starting ??= this.tryStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** start, retried with backoff until it succeeds or the service stops; never throws. */
  startInBackground(): void {
    void (async () => {
      for (let attempt = 0; !this.stopped && !this.boss; attempt++) {
        if (await this.start()) return;
        await new Promise((resolve) =>
          setTimeout(resolve, START_BACKOFF_MS[Math.min(attempt, START_BACKOFF_MS.length - 1)]).unref(),
        );
      }
    })();
  }

  private async tryStart(): Promise<boolean> {
    const boss = new PgBoss({
      connectionString: this.connectionString,
      max: 3,
      schedule: false,
      supervise: true,
      // Expired jobs (an attempt cut by a killed instance) are found this often.
      maintenanceIntervalSeconds: 15,
      application_name: 'animal-store-webhooks',
    });
    boss.on('error', (err: Error) => this.logger.warn(`webhook queue: ${err.message}`));
    try {
      await boss.start();
      if (!(await boss.getQueue(DELIVERY_QUEUE))) {
        await boss.createQueue(DELIVERY_QUEUE, {
          name: DELIVERY_QUEUE,
          // An attempt takes at most 10 s; a job cut by a killed instance runs again once expired.
          expireInSeconds: 30,
          retryLimit: 5,
          retryDelay: 5,
          retentionMinutes: 60 * 24 * 14,
        });
      }
      if (this.stopped) {
        await boss.stop({ graceful: false, wait: true });
        return false;
      }
      await boss.work<AttemptJob>(DELIVERY_QUEUE, { pollingIntervalSeconds: 1 }, async ([job]) => {
        await this.handler(job.data);
      });
      this.boss = boss;
      this.ran = true;
      this.logger.log('webhook delivery queue started');
      return true;
    } catch (err) {
      this.logger.warn(`webhook queue did not start: ${(err as Error).message}`);
      await boss.stop({ graceful: false, wait: false }).catch(() => undefined);
      return false;
    }
  }

  /** Enqueues an attempt, in the transaction `tx` when given, starting at `startAfter` (default now). */
  async send(job: AttemptJob, options: { tx?: Db; startAfter?: Date } = {}): Promise<void> {
    const sent = await (this.boss ?? this.sender).send(DELIVERY_QUEUE, job, {
      ...(options.tx ? { db: transactionExecutor(options.tx) } : {}),
      ...(options.startAfter ? { startAfter: options.startAfter } : {}),
    });
    if (sent === null) throw new Error('the webhook delivery queue does not exist yet');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.starting;
    const boss = this.boss;
    this.boss = undefined;
    // An attempt still running after 5 s is cut; its job runs again once expired.
    if (boss) await boss.stop({ graceful: true, wait: true, timeout: 5_000 });
  }
}
