import type { Db } from '../audit/audit-log.repository.js';

/** The key events other features may be told of (docs/webhooks.md, "Events"). */
export const KEY_EVENT_TYPES = [
  'key.created',
  'key.updated',
  'key.rolled',
  'key.revoked',
  'key.leaked',
  'key.expiring',
  'key.quota_threshold',
] as const;
export type KeyEventType = (typeof KEY_EVENT_TYPES)[number];

/** JSON data of an event: what happened to which key, never a secret or a hash. */
export type KeyEventData = Record<string, string | number | boolean | null | string[] | Record<string, unknown>>;

export interface KeyEvent {
  type: KeyEventType;
  data: KeyEventData;
}

/**
 * Where ApiKeysService hands each change's event, inside the transaction of the change, so an
 * event is announced exactly when its change commits (and the rate limiter's QuotaThresholds the
 * day window's thresholds, in the transaction that records them). The webhooks feature provides
 * it (KEY_EVENTS); without it events go nowhere.
 */
export interface KeyEventSink {
  announce(tx: Db, event: KeyEvent): Promise<void>;
  /**
   * Whether an event of `type` would be delivered anywhere: an enabled endpoint subscribes to it
   * and this process delivers webhooks at all. False without a query while no endpoint was ever
   * found enabled, so a service without webhooks asks the database nothing.
   */
  subscribes(type: KeyEventType): Promise<boolean>;
  /**
   * Registers the check that announces `key.expiring`: the sink runs it while it has somewhere
   * to deliver (ApiKeysService.announceExpiring).
   */
  onExpiryCheck(check: () => Promise<void>): void;
}

/** The injection token of the KeyEventSink. */
export const KEY_EVENTS = Symbol('KeyEventSink');
