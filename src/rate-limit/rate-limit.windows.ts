/**
 * The arithmetic of the rate limiter, free of any storage: fixed windows aligned to the Unix
 * epoch, the decision for one request, and the headers that describe it. The memory store
 * runs exactly this; the Redis script (redis.store.ts) mirrors it line for line.
 *
 * Fixed windows: the minute window is a UTC clock minute, the day window a UTC day. A counter
 * per window can be updated atomically and its reset time is exact, which a sliding log or a
 * token bucket would not give as cheaply. The known cost is the boundary: a client can spend
 * one window's allowance in its last second and the next window's in the following second.
 */

/** One window of a request, as RateLimiter resolved it from the named throttlers. */
export interface WindowSpec {
  /** Throttler name (`minute`, `day`). */
  name: string;
  ttlMs: number;
  limit: number;
}

/** A window after the request was decided. */
export interface WindowState extends WindowSpec {
  /** Requests counted in the current window, this one included when it was allowed. */
  count: number;
  /** Epoch milliseconds at which the current window ends (a whole second). */
  resetMs: number;
}

export type Outcome = 'allowed' | 'limited' | 'banned';

export interface ConsumeRequest {
  /** Counter identity: `key:<apiKeyId>` or `ip:<address>`. */
  subject: string;
  nowMs: number;
  windows: WindowSpec[];
  /** More rejections than this within one limited period ban the subject. */
  banThreshold: number;
  banMs: number;
}

export interface ConsumeResult {
  outcome: Outcome;
  windows: WindowState[];
  /** Epoch milliseconds at which the ban ends (outcome `banned` only). */
  bannedUntilMs?: number;
  /** This request's refusal started the ban (counted in rate_limit_bans_total). */
  banStarted?: boolean;
}

/**
 * A subject's windows and ban as read, counting nothing (GET /v1/rate_limit): each window's
 * count as the subject's next counted request on this instance would find it.
 */
export interface PeekResult {
  windows: WindowState[];
  /** Epoch milliseconds at which the subject's ban ends, when it is banned. */
  bannedUntilMs?: number;
}

/** Start (epoch ms) of the fixed window of length ttlMs that contains nowMs. */
export function windowStart(nowMs: number, ttlMs: number): number {
  return nowMs - (((nowMs % ttlMs) + ttlMs) % ttlMs);
}

export function windowReset(nowMs: number, ttlMs: number): number {
  return windowStart(nowMs, ttlMs) + ttlMs;
}

/** Counters per window as read before the request: 0 for a window not seen yet. */
export type Counts = number[];

/** Index of the blocking window that resets last, or -1 when no window is exhausted. */
export function blockingWindow(specs: readonly WindowSpec[], counts: Counts, nowMs: number): number {
  let found = -1;
  for (let i = 0; i < specs.length; i++) {
    if (counts[i] < specs[i].limit) continue;
    if (found === -1 || windowReset(nowMs, specs[i].ttlMs) >= windowReset(nowMs, specs[found].ttlMs)) found = i;
  }
  return found;
}

/** The window the headers describe: fewest remaining; on a tie, the one resetting later. */
export function closestToExhaustion(windows: readonly WindowState[]): WindowState {
  let best = windows[0];
  for (const w of windows.slice(1)) {
    const rw = remaining(w);
    const rb = remaining(best);
    if (rw < rb || (rw === rb && w.resetMs > best.resetMs)) best = w;
  }
  return best;
}

export function remaining(w: WindowState): number {
  return Math.max(0, w.limit - w.count);
}

export const RATE_LIMIT_HEADER_NAMES = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
] as const;

export type RateLimitHeaders = Record<(typeof RATE_LIMIT_HEADER_NAMES)[number], string>;

/**
 * The headers of a decided request: the X-RateLimit-* triple (docs/api.md, "Rate limits") and
 * the IETF fields of draft-ietf-httpapi-ratelimit-headers-11, which say the same thing in the
 * form new client libraries and gateways read:
 *
 *     RateLimit-Policy: "minute";q=60;w=60, "day";q=1000;w=86400    every window: quota, seconds
 *     RateLimit: "minute";r=59;t=41                                  the triple's window: left, seconds to reset
 *
 * RateLimit describes the same window as the triple (closest to exhaustion), so r is
 * X-RateLimit-Remaining and now + t is X-RateLimit-Reset; on a 429, t is Retry-After. While
 * banned, Remaining and r are 0 and Reset and t the end of the ban: that is when the next
 * request can succeed.
 *
 * Runs on every /v1 request, so the values are written with plain concatenation. Window names
 * come from the code (WINDOWS: `minute`, `day`), so they need no Structured Field escaping.
 */
export function rateLimitHeaders(result: ConsumeResult, nowMs: number): RateLimitHeaders {
  const w = closestToExhaustion(result.windows);
  const banned = result.outcome === 'banned' && result.bannedUntilMs !== undefined;
  const left = banned ? 0 : remaining(w);
  const untilMs = banned ? (result.bannedUntilMs as number) : w.resetMs;
  let policy = '';
  for (const p of result.windows) {
    if (policy !== '') policy += ', ';
    policy += '"' + p.name + '";q=' + p.limit + ';w=' + Math.round(p.ttlMs / 1000);
  }
  return {
    'X-RateLimit-Limit': String(w.limit),
    'X-RateLimit-Remaining': String(left),
    'X-RateLimit-Reset': String(Math.ceil(untilMs / 1000)),
    'RateLimit-Policy': policy,
    RateLimit: '"' + w.name + '";r=' + left + ';t=' + Math.max(0, Math.ceil((untilMs - nowMs) / 1000)),
  };
}

/**
 * Whole seconds until a refused request can succeed (at least 1): the end of the ban, or the
 * reset of the exhausted window that resets last.
 */
export function retryAfterSeconds(result: ConsumeResult, nowMs: number): number {
  let until: number;
  if (result.outcome === 'banned' && result.bannedUntilMs !== undefined) {
    until = result.bannedUntilMs;
  } else {
    until = nowMs;
    for (const w of result.windows) if (w.count >= w.limit && w.resetMs > until) until = w.resetMs;
  }
  return Math.max(1, Math.ceil((until - nowMs) / 1000));
}
