import { Global, Module } from '@nestjs/common';
import { KEY_EVENTS } from '../api-keys/key-events.js';
import { AuditModule } from '../audit/audit.module.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks (docs/webhooks.md): endpoints, deliveries and their queue. Global so that
 * ApiKeysService finds the KeyEventSink (KEY_EVENTS) without the api-keys feature importing this one.
 */
@Global()
@Module({
  imports: [AuditModule],
  providers: [WebhooksRepository, WebhooksService, { provide: KEY_EVENTS, useExisting: WebhooksService }],
  exports: [WebhooksService, KEY_EVENTS],
})
export class WebhooksModule {}
