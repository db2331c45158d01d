// The types of bench/paced.mjs, for the tests written in TypeScript.
import type { Pool } from 'undici';

/** A scenario's request (bench/scenarios.mjs); setupRequest returns each request to send. */
export interface PacedRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (req: PacedRequest) => PacedRequest;
}

export interface PacedOptions {
  url: string;
  connections: number;
  /** Requests a second, evenly spaced. */
  rate: number;
  /** Seconds of sending: rate × duration requests. */
  duration: number;
  /** Merged under the request's own headers. */
  headers?: Record<string, string>;
  request: PacedRequest;
  /** Bound of the wait for the last responses (10). */
  drainSeconds?: number;
  /** Connections to send over (pacedPool), left open for the caller to close; else the run opens its own. */
  pool?: Pool;
}

/** Milliseconds, from each request's due time; 2xx responses only. */
export interface PacedLatency {
  p50: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
  average: number;
  totalCount: number;
}

/** A window of due time that holds some of the slowest responses (`slowestWindows`). */
export interface SlowWindow {
  /** Milliseconds from the run's start to the window's start. */
  atMs: number;
  /** How many of the slowest responses fell due in it. */
  requests: number;
  /** The longest of their latencies, ms. */
  maxMs: number;
  /** The second of its UTC minute (0-59) it starts in, when the run's start was given. */
  secondOfMinute?: number;
}

/** The slowest 1% of the 2xx responses, by when they fell due. */
export interface SlowestWindows {
  requests: number;
  /** Windows of `windowMs` of due time that hold them. */
  windows: number;
  windowMs: number;
  /** The windows holding most of them, most first (at most 5). */
  busiest: SlowWindow[];
}

export interface PacedResult {
  /** total: responses of any status; sent: requests sent; average: responses a second. */
  requests: { total: number; sent: number; average: number };
  latency: PacedLatency;
  /** Milliseconds between each request's due time and its sending. */
  sendLag: { p50: number; p99: number; max: number };
  /** Requests with no response: connection errors and timeouts. */
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  firstError: string | null;
  /** Seconds from the first due time to the last response, at least the run's duration. */
  duration: number;
  /** When the first request fell due, in Date.now() milliseconds: the start of `slowest`'s windows. */
  startedAtMs: number;
  slowest: SlowestWindows;
  '1xx': number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
}

export function paced(options: PacedOptions): Promise<PacedResult>;

/** The slowest 1% of responses by due time: request i's latency in µs (NaN: none), due at i × periodMs. */
export function slowestWindows(
  latenciesUs: ArrayLike<number>,
  periodMs: number,
  windowMs?: number,
  startedAtMs?: number,
): SlowestWindows;

/** Keep-alive connections for paced runs (pipelining 1), to `destroy()` when done. */
export function pacedPool(url: string, connections: number): Pool;
