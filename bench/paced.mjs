// An open-loop load generator for the fixed-rate phase: request i is due at start + i/rate
// seconds and is sent then, whether or not the earlier ones have been answered, so requests
// arrive evenly spaced in time, as production traffic does, and never in bursts. Each latency
// runs from the request's due time, not from when a connection took it: a request that waits
// for a free connection, or behind a slow server, counts its wait (no coordinated omission).
//
// The result has the fields bench/load.mjs reads from an autocannon result, with the same
// meanings: latencies of the 2xx responses only, `errors` counting every request that got no
// response (its `timeouts` among them).
/* global setTimeout, clearTimeout */
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { URL } from 'node:url';
import { build } from 'hdr-histogram-js';
import { Pool } from 'undici';

/** How long the run waits for the responses still outstanding once the last request is sent. */
const DRAIN_SECONDS = 10;
/** The width of the windows of due time the slowest responses are counted in (`slowest`). */
export const SLOW_WINDOW_MS = 100;
/** The busiest of those windows a result lists. */
const BUSIEST_WINDOWS = 5;

/**
 * `rate` requests a second over at most `connections` keep-alive connections (pipelining 1,
 * opened as the load needs them) for `duration` seconds: rate × duration requests in all.
 * `request` is a scenario's request ({ method, path, headers, body, setupRequest }); `headers`
 * merge under its own, and `setupRequest(request)` returns each request to send, as autocannon
 * calls it. `drainSeconds` bounds the wait for the last responses; those that did not come back
 * are `timeouts`.
 */
export async function paced({
  url,
  connections,
  rate,
  duration,
  headers = {},
  request,
  drainSeconds = DRAIN_SECONDS,
  pool: given,
}) {
  if (!(rate > 0) || !(duration > 0))
    throw new Error(`paced: rate and duration must be positive (${rate}, ${duration})`);
  const pool = given ?? pacedPool(url, connections);
  const run = new Run(pool, rate, duration, { ...request, headers: { ...headers, ...request.headers } });
  try {
    await run.sendAll();
    await run.drain(drainSeconds * 1000);
  } finally {
    run.finished = true;
    // Aborts whatever is still outstanding; their callbacks find the run finished. A pool the
    // caller gave is the caller's to close.
    if (given === undefined) await pool.destroy().catch(() => {});
  }
  return run.result();
}

/**
 * The keep-alive connections of paced runs: `paced` opens its own, or takes one from its caller
 * (`pool`), so that a measured run goes on over the connections its warm-up opened, as a
 * balancer's kept-alive connections carry production's requests; `destroy()` it when done.
 */
export function pacedPool(url, connections) {
  return new Pool(new URL(url).origin, { connections, pipelining: 1 });
}

/** undici's dispatch options of a request: the body as a Buffer, the headers as it takes them. */
function dispatchOptions({ method = 'GET', path = '/', headers, body }) {
  return {
    method,
    path,
    headers,
    body: body === undefined || body === null || Buffer.isBuffer(body) ? (body ?? null) : Buffer.from(String(body)),
  };
}

class Run {
  constructor(pool, rate, duration, base) {
    this.pool = pool;
    this.periodMs = 1000 / rate;
    this.durationMs = duration * 1000;
    // Every request due before `duration` (the tolerance keeps rate × duration itself out).
    this.planned = Math.ceil(rate * duration - 1e-6);
    this.setup = typeof base.setupRequest === 'function' ? base.setupRequest : null;
    this.base = base;
    // Built once when every request is the same; undici does not change the options it is given.
    const prebuilt = dispatchOptions(base);
    this.fixed = this.setup ? null : prebuilt;
    this.baseBody = base.body;
    this.baseBodyBuffer = prebuilt.body;
    this.t0 = 0;
    this.next = 0;
    this.outstanding = 0;
    this.finished = false;
    this.lastResponseAt = 0;
    this.responses = 0;
    this.failures = 0;
    this.timeouts = 0;
    this.classes = [0, 0, 0, 0, 0];
    this.codes = new Map();
    this.firstError = null;
    // Microseconds; three significant digits.
    this.latency = build({ lowestDiscernibleValue: 1, highestTrackableValue: 60e6, numberOfSignificantValueDigits: 3 });
    this.sendLag = build({ lowestDiscernibleValue: 1, highestTrackableValue: 60e6, numberOfSignificantValueDigits: 3 });
    // Each 2xx response's latency in µs by request number (NaN: none), for `slowest`.
    this.latencies = new Float64Array(this.planned).fill(NaN);
    this.onIdle = null;
    this.allSent = null;
    this.failed = null;
    this.tick = this.tick.bind(this);
  }

  /** Sends every request at its due time; resolves once the last one is sent. */
  sendAll() {
    return new Promise((resolve, reject) => {
      this.allSent = resolve;
      this.failed = reject;
      this.t0 = performance.now();
      this.tick();
    });
  }

  /**
   * Sends every request that is due, then sleeps until the next one is. Node's timers have a grain
   * of 1 ms, so a request leaves up to about a millisecond after its due time, later when the
   * event loop is busy; its latency includes that, and `sendLag` reports it.
   */
  tick() {
    const now = performance.now();
    try {
      while (this.next < this.planned) {
        const due = this.t0 + this.next * this.periodMs;
        if (due > now) break;
        this.sendLag.recordValue(Math.round((now - due) * 1000));
        this.send(due);
        this.next++;
      }
    } catch (err) {
      // A scenario's setupRequest that throws ends the run.
      this.failed(err);
      return;
    }
    if (this.next < this.planned) setTimeout(this.tick, Math.max(1, this.t0 + this.next * this.periodMs - now));
    else this.allSent();
  }

  send(due) {
    let options = this.fixed;
    if (options === null) {
      const req = this.setup(this.base);
      options = {
        method: req.method ?? 'GET',
        path: req.path ?? '/',
        headers: req.headers,
        body: req.body === this.baseBody ? this.baseBodyBuffer : dispatchOptions(req).body,
      };
    }
    this.outstanding++;
    // Queued in the pool while every connection is busy; dispatch reports its own errors to the handler.
    // this.next is the request's number until tick() moves on to the next.
    this.pool.dispatch(options, new Exchange(this, due, this.next));
  }

  response(exchange) {
    if (this.finished) return;
    const now = performance.now();
    this.lastResponseAt = now;
    this.responses++;
    const status = exchange.status;
    const cls = Math.floor(status / 100) - 1;
    if (cls >= 0 && cls < 5) this.classes[cls]++;
    this.codes.set(status, (this.codes.get(status) ?? 0) + 1);
    if (cls === 1) {
      const us = Math.round((now - exchange.due) * 1000);
      this.latency.recordValue(us);
      this.latencies[exchange.index] = us;
    }
    this.settled();
  }

  failure(err) {
    if (this.finished) return;
    this.failures++;
    this.firstError ??= err;
    this.settled();
  }

  settled() {
    this.outstanding--;
    if (this.outstanding === 0 && this.onIdle !== null) this.onIdle();
  }

  /** Waits for the outstanding responses, at most `ms`; those still missing then are timeouts. */
  async drain(ms) {
    if (this.outstanding > 0) {
      let timer;
      await new Promise((resolve) => {
        this.onIdle = resolve;
        timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
    }
    this.timeouts = this.outstanding;
    this.finished = true;
  }

  result() {
    // A percentile is the top of its value's bucket (three significant digits), kept within the exact max.
    const ms = (h, p) =>
      h.totalCount > 0 ? Math.round(Math.min(h.getValueAtPercentile(p), h.maxValue) / 10) / 100 : 0;
    const lat = this.latency;
    const elapsedMs = Math.max(this.durationMs, this.lastResponseAt - this.t0);
    const statusCodeStats = {};
    for (const [code, count] of [...this.codes].sort((a, b) => a[0] - b[0])) statusCodeStats[code] = { count };
    const startedAtMs = performance.timeOrigin + this.t0;
    const out = {
      requests: {
        total: this.responses,
        sent: this.next,
        average: Math.round((this.responses / elapsedMs) * 1e5) / 100,
      },
      latency: {
        p50: ms(lat, 50),
        p90: ms(lat, 90),
        p99: ms(lat, 99),
        p99_9: ms(lat, 99.9),
        max: lat.totalCount > 0 ? Math.round(lat.maxValue / 10) / 100 : 0,
        average: lat.totalCount > 0 ? Math.round(lat.mean / 10) / 100 : 0,
        totalCount: lat.totalCount,
      },
      // How late the timer sent requests after their due time: the generator's own share of each latency.
      sendLag: {
        p50: ms(this.sendLag, 50),
        p99: ms(this.sendLag, 99),
        max: Math.round(this.sendLag.maxValue / 10) / 100,
      },
      errors: this.failures + this.timeouts,
      timeouts: this.timeouts,
      non2xx: this.responses - this.classes[1],
      statusCodeStats,
      firstError: this.firstError ? String(this.firstError.code ?? this.firstError.message) : null,
      duration: Math.round(elapsedMs) / 1000,
      // When the first request fell due (Date.now() time): where `slowest`'s windows start from.
      startedAtMs,
      slowest: slowestWindows(this.latencies, this.periodMs, SLOW_WINDOW_MS, startedAtMs),
    };
    for (let i = 0; i < 5; i++) out[`${i + 1}xx`] = this.classes[i];
    this.latency.destroy();
    this.sendLag.destroy();
    return out;
  }
}

/** undici's handler of one request (its callback interface on raw headers, which it does not parse). */
class Exchange {
  constructor(run, due, index) {
    this.run = run;
    this.due = due;
    this.index = index;
    this.status = 0;
  }

  onConnect() {}

  onHeaders(status) {
    this.status = status;
    return true;
  }

  // The body is read and dropped, so the connection is free for the next request.
  onData() {
    return true;
  }

  onComplete() {
    this.run.response(this);
  }

  onError(err) {
    this.run.failure(err);
  }
}

/**
 * A window of the slowest responses starting `atMs` into the run, with the second of its UTC
 * minute when the run's start is given: every key's lease ends with its minute, so a window in
 * a minute's first seconds holds that minute's lease renewals.
 */
function window(atMs, startedAtMs) {
  const entry = { atMs, requests: 0, maxMs: 0 };
  if (startedAtMs !== undefined) entry.secondOfMinute = Math.floor(((startedAtMs + atMs) % 60_000) / 1000);
  return entry;
}

/**
 * Where in the run its slowest 1% of 2xx responses fell due: the number of SLOW_WINDOW_MS windows
 * of due time (from the run's start) that hold them, and the busiest windows. A p99 made by a few
 * stalls of the server (a pause, a burst of other work on the machine) sits in a few windows,
 * most of their requests slow; one made by requests slow at random is spread over many.
 * `latenciesUs[i]` is request i's latency (NaN: no 2xx response); i / rate is its due time.
 * `startedAtMs`: when the first request fell due (Unix ms), for each window's second of its minute.
 */
export function slowestWindows(latenciesUs, periodMs, windowMs = SLOW_WINDOW_MS, startedAtMs = undefined) {
  const answered = [];
  for (let i = 0; i < latenciesUs.length; i++) if (!Number.isNaN(latenciesUs[i])) answered.push(i);
  const count = Math.ceil(answered.length / 100);
  if (count === 0) return { requests: 0, windows: 0, windowMs, busiest: [] };
  answered.sort((a, b) => latenciesUs[b] - latenciesUs[a]);
  const byWindow = new Map();
  for (const i of answered.slice(0, count)) {
    const w = Math.floor((i * periodMs) / windowMs);
    const entry = byWindow.get(w) ?? window(w * windowMs, startedAtMs);
    entry.requests++;
    entry.maxMs = Math.max(entry.maxMs, Math.round(latenciesUs[i] / 10) / 100);
    byWindow.set(w, entry);
  }
  const busiest = [...byWindow.values()]
    .sort((a, b) => b.requests - a.requests || a.atMs - b.atMs)
    .slice(0, BUSIEST_WINDOWS);
  return { requests: count, windows: byWindow.size, windowMs, busiest };
}
