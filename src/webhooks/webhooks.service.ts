import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { KEY_EVENT_TYPES, type KeyEvent, type KeyEventSink, type KeyEventType } from '../api-keys/key-events.js';
import { AuditLogRepository, type Db } from '../audit/audit-log.repository.js';
import { changedFields, instant, type Actor, type AuditValue } from '../audit/audit.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { runtimeConfig, type RuntimeConfig } from '../config/runtime.config.js';
import { webhooksConfig, type WebhooksConfig } from '../config/webhooks.config.js';
import { ApiError } from '../errors/api-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { Clock, SystemClock } from '../time/clock.js';
import { newSigningSecret, SecretBox, signatureHeader } from './webhook-secrets.js';
import { postWebhook } from './webhook-sender.js';
import { privateTargetProblem, urlProblem } from './webhook-targets.js';
import { WebhookQueue, type AttemptJob } from './webhook-queue.js';
import { WebhooksRepository, type DeliveryRow, type EndpointChange, type EndpointRow } from './webhooks.repository.js';

/** The events an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = KEY_EVENT_TYPES;
/** The event POST …/test sends. */
export const TEST_EVENT = 'webhook.test';
/** How long a rotated-out secret keeps signing. */
export const ROTATION_OVERLAP_MS = 86_400_000;
/** How often an instance whose queue is off looks for an endpoint another instance enabled. */
const ENABLED_CHECK_MS = 60_000;
/** How often a running queue's depth and oldest pending delivery are counted for the metrics. */
const STATS_MS = 15_000;
/** How often an instance whose queue runs looks for keys newly within 7 days or 1 day of expiry. */
const EXPIRY_CHECK_MS = 5 * 60_000;
export const MAX_DESCRIPTION_LENGTH = 500;

export interface NewEndpoint {
  url: string;
  events: string[];
  description?: string | null;
}

export type EndpointUpdate = NewEndpoint extends infer T ? Partial<T> & { enabled?: boolean } : never;

/** The fields of an endpoint the audit log follows: never a secret. */
function audited(row: EndpointRow): Record<string, AuditValue> {
  return { url: row.url, events: row.events, description: row.description, enabled: row.enabled };
}

function invalid(message: string, field: string): ApiError {
  return new ApiError('validation_failed', `${message}.`, { details: [{ field, message }] });
}

/**
 * Webhook endpoints and their deliveries (docs/webhooks.md): the admin API's operations, each
 * change audited in its transaction; the KeyEventSink that turns a key change into a delivery
 * per subscribed endpoint, in the change's transaction; and the attempts, made by the pg-boss
 * queue's worker. On the embedded database there is no queue: the operations answer 501.
 */
@Injectable()
export class WebhooksService implements KeyEventSink, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly box: SecretBox;
  private readonly queue?: WebhookQueue;
  private readonly timers: NodeJS.Timeout[] = [];
  private expiryCheck?: () => Promise<void>;

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly audit: AuditLogRepository,
    // Null in the key tool, which makes no attempts and keeps no registry.
    @Optional() @Inject(MetricsService) private readonly metrics: MetricsService | null,
    @Inject(webhooksConfig.token) private readonly config: WebhooksConfig,
    @Inject(databaseConfig.token) database: DatabaseConfig,
    @Inject(runtimeConfig.token) private readonly runtime: RuntimeConfig,
    @Optional() private readonly clock: Clock = new SystemClock(),
  ) {
    this.box = new SecretBox(config.webhookSecretKey);
    if (database.databaseUrl !== undefined) {
      this.queue = new WebhookQueue(database.databaseUrl, (job) => this.attempt(job));
    }
  }

  private get production(): boolean {
    return this.runtime.nodeEnv === 'production';
  }

  /**
   * Nothing here waits on the database: one query in the background looks for an enabled
   * endpoint, and only then is the queue started (retrying while the database is down). An
   * instance without one checks again every minute, in case another instance enabled one.
   */
  onApplicationBootstrap(): void {
    const queue = this.queue;
    if (!queue) return;
    const check = async () => {
      if (queue.started) return;
      try {
        if (await this.repository.anyEnabled()) queue.startInBackground();
      } catch (err) {
        this.logger.warn(`could not look for webhook endpoints: ${(err as Error).message}`);
      }
    };
    void check();
    this.timers.push(setInterval(() => void check(), ENABLED_CHECK_MS).unref());
    this.timers.push(
      setInterval(() => {
        if (queue.started) void this.checkExpiring();
      }, EXPIRY_CHECK_MS).unref(),
    );
    this.timers.push(
      setInterval(() => {
        if (!queue.started) return;
        this.repository.pendingStats().then(
          ({ depth, oldest }) => this.metrics?.webhookQueue(depth, oldest),
          () => undefined, // the last values stay
        );
      }, STATS_MS).unref(),
    );
  }

  onExpiryCheck(check: () => Promise<void>): void {
    this.expiryCheck = check;
  }

  /** Announces the keys now expiring within 7 days or 1 day (each once); failures are logged. */
  async checkExpiring(): Promise<void> {
    try {
      await this.expiryCheck?.();
    } catch (err) {
      this.logger.warn(`could not announce expiring keys: ${(err as Error).message}`);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await this.queue?.stop();
  }

  /** The queue, started: 501 on the embedded database, 503 while the database cannot start it. */
  private async runningQueue(): Promise<WebhookQueue> {
    if (!this.queue) {
      throw new ApiError(
        'not_implemented',
        'Webhooks need PostgreSQL (DATABASE_URL); the embedded database has no delivery queue.',
      );
    }
    if (!(await this.queue.start())) {
      throw new ApiError(
        'service_unavailable',
        'The webhook delivery queue cannot start: the database does not answer.',
        {
          headers: { 'Retry-After': '5' },
        },
      );
    }
    return this.queue;
  }

  private requireQueue(): void {
    if (!this.queue) {
      throw new ApiError(
        'not_implemented',
        'Webhooks need PostgreSQL (DATABASE_URL); the embedded database has no delivery queue.',
      );
    }
  }

  private checkEvents(events: unknown): string[] {
    if (!Array.isArray(events) || events.length === 0) throw invalid('events must name at least one event', 'events');
    const unknown = events.find((e) => typeof e !== 'string' || !WEBHOOK_EVENT_TYPES.includes(e));
    if (unknown !== undefined) {
      throw invalid(`events must each be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`, 'events');
    }
    return [...new Set(events as string[])];
  }

  private async checkUrl(url: string): Promise<string> {
    const problem = urlProblem(url);
    if (problem !== undefined) throw invalid(problem, 'url');
    if (this.production && !this.config.webhookAllowPrivateTargets) {
      const refused = await privateTargetProblem(new URL(url));
      if (refused !== undefined) throw invalid(refused, 'url');
    }
    return url;
  }

  private checkDescription(description: string | null | undefined): string | null {
    if (description === undefined || description === null) return null;
    if (description.length > MAX_DESCRIPTION_LENGTH) {
      throw invalid(`description must be at most ${MAX_DESCRIPTION_LENGTH} characters`, 'description');
    }
    return description;
  }

  async create(input: NewEndpoint, actor: Actor): Promise<{ endpoint: EndpointRow; secret: string }> {
    this.requireQueue();
    const url = await this.checkUrl(input.url);
    const events = this.checkEvents(input.events);
    const description = this.checkDescription(input.description);
    if (this.production && !this.box.encrypts) {
      throw new ApiError(
        'service_unavailable',
        'WEBHOOK_SECRET_KEY is not set: a production service cannot store a webhook signing secret unencrypted. Set it (32 characters or more) and restart.',
      );
    }
    await this.runningQueue();
    const secret = newSigningSecret();
    const endpoint = await this.repository.transaction(async (tx) => {
      const row = await this.repository.insert(
        {
          url,
          events,
          description,
          enabled: true,
          secret: this.box.seal(secret),
          previousSecret: null,
          previousSecretExpiresAt: null,
        },
        tx,
      );
      await this.record(tx, actor, 'webhook.created', row.id, changedFields(null, audited(row)));
      return row;
    });
    return { endpoint, secret };
  }

  async list(): Promise<EndpointRow[]> {
    this.requireQueue();
    return this.repository.list();
  }

  async get(id: bigint): Promise<EndpointRow> {
    this.requireQueue();
    const row = await this.repository.find(id);
    if (!row) throw noSuchEndpoint(id);
    return row;
  }

  async update(id: bigint, change: EndpointUpdate, actor: Actor): Promise<EndpointRow> {
    this.requireQueue();
    const checked: EndpointChange = {};
    if (change.url !== undefined) checked.url = await this.checkUrl(change.url);
    if (change.events !== undefined) checked.events = this.checkEvents(change.events);
    if (change.description !== undefined) checked.description = this.checkDescription(change.description);
    if (change.enabled !== undefined) checked.enabled = change.enabled;
    if (checked.enabled) await this.runningQueue();
    const now = this.clock.now();
    return this.repository.transaction(async (tx) => {
      const existing = await this.repository.lock(id, tx);
      if (!existing) throw noSuchEndpoint(id);
      const changes = changedFields(audited(existing), audited({ ...existing, ...checked }));
      if (Object.keys(changes).length === 0) return existing;
      const row = await this.repository.update(id, checked, now, tx);
      await this.record(tx, actor, 'webhook.updated', id, changes);
      return row;
    });
  }

  async delete(id: bigint, actor: Actor): Promise<void> {
    this.requireQueue();
    await this.repository.transaction(async (tx) => {
      const existing = await this.repository.lock(id, tx);
      if (!existing) throw noSuchEndpoint(id);
      await this.repository.delete(id, tx);
      await this.record(tx, actor, 'webhook.deleted', id, changedFields(audited(existing), nulls(audited(existing))));
    });
  }

  /** A new secret; the one it replaces keeps signing for ROTATION_OVERLAP_MS. */
  async rotateSecret(id: bigint, actor: Actor): Promise<{ endpoint: EndpointRow; secret: string }> {
    this.requireQueue();
    const secret = newSigningSecret();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    const endpoint = await this.repository.transaction(async (tx) => {
      const existing = await this.repository.lock(id, tx);
      if (!existing) throw noSuchEndpoint(id);
      const row = await this.repository.update(
        id,
        { secret: this.box.seal(secret), previousSecret: existing.secret, previousSecretExpiresAt: expiresAt },
        now,
        tx,
      );
      await this.record(tx, actor, 'webhook.secret_rotated', id, {
        previousSecretExpiresAt: { before: instant(existing.previousSecretExpiresAt), after: instant(expiresAt) },
      });
      return row;
    });
    return { endpoint, secret };
  }

  /** Sends a `webhook.test` event to the endpoint; the delivery, pending. */
  async sendTest(id: bigint): Promise<DeliveryRow> {
    const queue = await this.runningQueue();
    return this.repository.transaction(async (tx) => {
      const endpoint = await this.repository.find(id, tx);
      if (!endpoint) throw noSuchEndpoint(id);
      return this.enqueue(tx, queue, endpoint.id, TEST_EVENT, { webhookId: endpoint.id.toString() });
    });
  }

  /** Up to `limit` deliveries of an endpoint below `before`, newest first, and the next cursor. */
  async deliveries(
    id: bigint,
    limit: number,
    before?: bigint,
  ): Promise<{ deliveries: DeliveryRow[]; nextBefore: bigint | null }> {
    await this.get(id);
    const rows = await this.repository.deliveries(id, limit + 1, before);
    const deliveries = rows.slice(0, limit);
    return { deliveries, nextBefore: rows.length > limit ? deliveries[deliveries.length - 1].id : null };
  }

  /** A failed delivery tried once more; 404 when the endpoint has no such delivery, 400 unless it failed. */
  async retry(id: bigint, deliveryId: bigint): Promise<DeliveryRow> {
    await this.get(id);
    const queue = await this.runningQueue();
    const now = this.clock.now();
    return this.repository.transaction(async (tx) => {
      const existing = await this.repository.findDelivery(deliveryId, tx);
      if (!existing || existing.endpointId !== id) {
        throw new ApiError('not_found', `Webhook endpoint ${id} has no delivery ${deliveryId}.`);
      }
      const reopened = await this.repository.reopen(deliveryId, id, now, tx);
      if (!reopened) {
        throw invalid(`delivery ${deliveryId} is ${existing.state}; only a failed delivery is retried`, 'deliveryId');
      }
      await queue.send({ deliveryId: deliveryId.toString(), attempt: reopened.attempts }, { tx });
      return reopened;
    });
  }

  /** KeyEventSink: a delivery per enabled endpoint subscribed to the event, in the change's transaction. */
  async announce(tx: Db, event: KeyEvent): Promise<void> {
    const queue = this.queue;
    if (!queue) return;
    const endpoints = await this.repository.subscribed(event.type, tx);
    for (const { id } of endpoints) await this.enqueue(tx, queue, id, event.type, event.data);
  }

  /**
   * KeyEventSink: whether an enabled endpoint subscribes to `type`. Asks nothing while the queue
   * has not run here: no enabled endpoint was found yet (at start, every minute after, or made here).
   */
  async subscribes(type: KeyEventType): Promise<boolean> {
    if (!this.queue?.hasRun) return false;
    return (await this.repository.subscribed(type)).length > 0;
  }

  private async enqueue(
    tx: Db,
    queue: WebhookQueue,
    endpointId: bigint,
    type: string,
    data: unknown,
  ): Promise<DeliveryRow> {
    const now = this.clock.now();
    const payload = JSON.stringify({ type, timestamp: now.toISOString(), data });
    const delivery = await this.repository.insertDelivery(
      { endpointId, messageId: `msg_${randomUUID()}`, event: type, payload, nextAttemptAt: now },
      tx,
    );
    await queue.send({ deliveryId: delivery.id.toString(), attempt: 0 }, { tx });
    return delivery;
  }

  /**
   * One attempt of a delivery (the queue's worker). A job whose attempt was already made (a job
   * run again after its instance was cut off) does nothing. A failure schedules the next attempt
   * in the same transaction as its record, or marks the delivery `failed` after the last.
   */
  private async attempt(job: AttemptJob): Promise<void> {
    const queue = this.queue;
    if (!queue) return;
    const delivery = await this.repository.findDelivery(BigInt(job.deliveryId));
    if (!delivery || delivery.state !== 'pending' || delivery.attempts !== job.attempt) return;
    const endpoint = await this.repository.find(delivery.endpointId);
    if (!endpoint) return;
    const now = this.clock.now();
    const started = performance.now();
    const outcome = endpoint.enabled
      ? await this.post(endpoint, delivery, now).catch((err: unknown) => ({
          ok: false,
          status: null,
          error: `not sent: ${(err as Error).message}`,
        }))
      : { ok: false, status: null, error: 'the endpoint is disabled' };
    const seconds = (performance.now() - started) / 1000;
    const schedule = this.config.webhookRetrySchedule;
    const made = delivery.attempts + 1;
    const retryIn = outcome.ok || !endpoint.enabled || made >= schedule.length ? null : schedule[made];
    const state = outcome.ok ? 'succeeded' : retryIn === null ? 'failed' : 'pending';
    const nextAttemptAt = retryIn === null ? null : new Date(this.clock.now().getTime() + retryIn * 1000);
    await this.repository.transaction(async (tx) => {
      const recorded = await this.repository.recordAttempt(
        delivery.id,
        delivery.attempts,
        { state, lastStatus: outcome.status, lastError: outcome.error?.slice(0, 500) ?? null, nextAttemptAt },
        this.clock.now(),
        tx,
      );
      if (recorded && nextAttemptAt) {
        await queue.send({ deliveryId: job.deliveryId, attempt: made }, { tx, startAfter: nextAttemptAt });
      }
    });
    this.metrics?.webhookAttempt(delivery.event, state === 'pending' ? 'retrying' : state, seconds);
  }

  private async post(endpoint: EndpointRow, delivery: DeliveryRow, now: Date) {
    const secrets = [this.box.open(endpoint.secret)];
    if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
      secrets.push(this.box.open(endpoint.previousSecret));
    }
    const timestamp = Math.floor(now.getTime() / 1000);
    return postWebhook(
      endpoint.url,
      {
        'webhook-id': delivery.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, delivery.messageId, timestamp, delivery.payload),
      },
      delivery.payload,
      { allowPrivate: !this.production || this.config.webhookAllowPrivateTargets },
    );
  }

  private async record(
    tx: Db,
    actor: Actor,
    action: 'webhook.created' | 'webhook.updated' | 'webhook.deleted' | 'webhook.secret_rotated',
    id: bigint,
    changes: ReturnType<typeof changedFields>,
  ): Promise<void> {
    await this.audit.append(tx, {
      actor,
      action,
      keyId: null,
      adminTokenId: null,
      changes: { webhookId: { before: id.toString(), after: id.toString() }, ...changes },
    });
  }
}

function noSuchEndpoint(id: bigint): ApiError {
  return new ApiError('not_found', `No webhook endpoint has id ${id}.`);
}

function nulls(fields: Record<string, AuditValue>): Record<string, AuditValue> {
  return Object.fromEntries(Object.keys(fields).map((field) => [field, null]));
}
