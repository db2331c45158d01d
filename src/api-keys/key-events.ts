import type { Db } from '../audit/audit-log.repository.js';

/** The key events other features may be told of (docs/webhooks.md, "Events"). */
export const KEY_EVENT_TYPES = [
  'key.created',
  'key.updated',
  'key.rolled',
  'key.revoked',
  'key.leaked',
  'key.expiring',
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
 * event is announced exactly when its change commits. The webhooks feature provides it
 * (KEY_EVENTS); without it (the key tool) events go nowhere.
 */
export interface KeyEventSink {
  announce(tx: Db, event: KeyEvent): Promise<void>;
  /**
   * Registers the check that announces `key.expiring`: the sink runs it while it has somewhere
   * to deliver (ApiKeysService.announceExpiring).
   */
  onExpiryCheck(check: () => Promise<void>): void;
}

/** The injection token of the KeyEventSink. */
export const KEY_EVENTS = Symbol('KeyEventSink');
