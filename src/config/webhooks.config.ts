import { defineConfig, type ConfigOf } from './define-config.js';
import { oneOf, optional, type Reader } from './env.js';

/** Seconds before each attempt of a delivery: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE = [0, 5, 300, 1800, 7200, 18000, 36000, 36000] as const;
/** The shortest WEBHOOK_SECRET_KEY taken: 32 characters (`openssl rand -base64 32` gives 44). */
export const MIN_SECRET_KEY_LENGTH = 32;

function retrySchedule(env: Reader): number[] {
  const raw = optional(env, 'WEBHOOK_RETRY_SCHEDULE');
  if (raw === undefined) return [...DEFAULT_RETRY_SCHEDULE];
  const parts = raw.split(',').map((part) => part.trim());
  const valid = parts.length <= 20 && parts.every((part) => /^\d{1,6}$/.test(part));
  if (!valid) {
    env.problem(
      `WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated whole numbers of seconds (each at most 999999), got "${raw.slice(0, 100)}"`,
      'WEBHOOK_RETRY_SCHEDULE',
    );
    return [...DEFAULT_RETRY_SCHEDULE];
  }
  return parts.map(Number);
}

/**
 * Webhooks (docs/webhooks.md): the key their signing secrets are encrypted with, whether targets
 * on private addresses are allowed in production, and when a delivery's attempts are made.
 */
export const webhooksConfig = defineConfig('webhooks', (env) => {
  const secretKey = optional(env, 'WEBHOOK_SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < MIN_SECRET_KEY_LENGTH) {
    env.problem(
      `WEBHOOK_SECRET_KEY must be at least ${MIN_SECRET_KEY_LENGTH} characters (e.g. the output of openssl rand -base64 32)`,
      'WEBHOOK_SECRET_KEY',
    );
  }
  return {
    /** Encrypts endpoints' signing secrets at rest; required in production to create an endpoint. */
    webhookSecretKey: secretKey !== undefined && secretKey.length >= MIN_SECRET_KEY_LENGTH ? secretKey : undefined,
    /** true: targets on loopback, private, link-local or metadata addresses are allowed in production too. */
    webhookAllowPrivateTargets:
      oneOf(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', ['true', 'false'] as const, 'false') === 'true',
    /** Seconds before each attempt of a delivery (the first is usually 0); after the last, `failed`. */
    webhookRetrySchedule: retrySchedule(env),
  };
});
export type WebhooksConfig = ConfigOf<typeof webhooksConfig>;
