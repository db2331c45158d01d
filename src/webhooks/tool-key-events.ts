import type { KeyEventSink } from '../api-keys/key-events.js';
import { AuditLogRepository } from '../audit/audit-log.repository.js';
import type { DatabaseConfig } from '../config/database.config.js';
import type { RuntimeConfig } from '../config/runtime.config.js';
import type { WebhooksConfig } from '../config/webhooks.config.js';
import type { PrismaService } from '../database/prisma.service.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * The key tool's KeyEventSink: the service's own WebhooksService, built without Nest and without
 * metrics, so its lifecycle never runs, its queue never starts or polls, and no metrics registry
 * (or its default collectors) is made for one command. A change made with the tool is
 * announced in its transaction, as one made through the admin API is, and an instance whose
 * queue runs delivers it. On the embedded database there is no queue, so nothing is announced.
 */
export function toolKeyEventSink(
  prisma: PrismaService,
  config: { database: DatabaseConfig; runtime: RuntimeConfig; webhooks: WebhooksConfig },
): KeyEventSink {
  return new WebhooksService(
    new WebhooksRepository(prisma),
    new AuditLogRepository(prisma),
    null,
    config.webhooks,
    config.database,
    config.runtime,
  );
}
