/** How calls are retried (see AnimalStoreClientOptions.retry). */
export interface RetryOptions {
  /** Attempts of one call in all, the first included (default 4). */
  maxAttempts?: number;
  /** Backoff of the first repeated refusal or connection error, before jitter (default 500 ms). */
  baseDelayMs?: number;
  /** Cap of the exponential backoff (default 30 s). */
  maxDelayMs?: number;
  /**
   * Longest Retry-After the client waits out by itself (default 60 s). A longer one (a key
   * banned for 15 minutes, a day's quota spent) is thrown at once: the caller decides.
   */
  maxRetryAfterMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
};

/**
 * The wait before the next attempt, after `failures` consecutive failures (1 for the first).
 * As the interface tells clients: wait Retry-After; on repeated refusals back off
 * exponentially, with jitter so that many clients refused together do not return together.
 * The first refusal waits Retry-After exactly; later ones wait at least that, and at least
 * the backoff: base · 2^(failures-1), capped, of which a random half is jitter ("equal jitter").
 */
export function retryDelayMs(
  failures: number,
  retryAfterMs: number | undefined,
  options: Required<RetryOptions>,
  random: () => number,
): number {
  const backoff = (): number => {
    const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (failures - 1));
    return cap / 2 + random() * (cap / 2);
  };
  if (retryAfterMs === undefined) return Math.round(backoff());
  return failures <= 1 ? retryAfterMs : Math.round(Math.max(retryAfterMs, backoff()));
}

/** Waits ms, or rejects with the signal's reason as soon as it is aborted. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
