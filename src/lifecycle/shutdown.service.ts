import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { shutdownConfig, type ShutdownConfig } from '../config/shutdown.config.js';
import { InFlight } from './in-flight.js';

/** How often idle keep-alive connections are closed while draining. */
const DRAIN_POLL_MS = 50;

export interface DrainResult {
  /** Requests still running when SHUTDOWN_TIMEOUT_MS ran out (their connections were cut). */
  abandoned: number;
  elapsedMs: number;
}

/**
 * The instance's shutdown state and the draining of its HTTP server.
 *
 * On SIGTERM (see onShutdownSignals in graceful-shutdown.ts):
 *  1. begin(): readiness answers 503 from now on, so the load balancer stops routing here;
 *  2. after SHUTDOWN_DELAY_MS (time for the balancer to notice) drain(): the listener closes
 *     (new connections are refused), responses carry `Connection: close`, idle keep-alive
 *     connections are closed, and requests in flight run to completion, bounded by
 *     SHUTDOWN_TIMEOUT_MS, after which the remaining connections are cut;
 *  3. then the Nest application closes: the beforeApplicationShutdown hooks run first (the usage
 *     per key still held is written, a purge in progress stops), then the database and Redis
 *     close, and the process exits 0.
 */
@Injectable()
export class ShutdownService {
  private readonly logger = new Logger('Shutdown');
  private shuttingDown = false;
  private readonly inFlight = new InFlight<ServerResponse>();
  private readonly attached = new WeakSet<Server>();

  constructor(@Inject(shutdownConfig.token) private readonly config: ShutdownConfig) {}

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Readiness fails from now on. Idempotent. */
  begin(): void {
    this.shuttingDown = true;
  }

  /** Tracks the server's requests, so drain() knows when the last one has finished. */
  attach(server: Server): void {
    if (this.attached.has(server)) return;
    this.attached.add(server);
    server.on('request', (_req, res: ServerResponse) => {
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
      // A request arriving on a kept-alive connection during the drain is served, but the
      // connection closes after it: the client reconnects, to another instance.
      if (this.shuttingDown) res.shouldKeepAlive = false;
    });
  }

  /**
   * Stops accepting connections and waits for the requests in flight, at most
   * SHUTDOWN_TIMEOUT_MS; what is still running then has its connection closed.
   */
  async drain(server: Server): Promise<DrainResult> {
    this.begin();
    const started = Date.now();
    const deadline = started + this.config.shutdownTimeoutMs;
    for (const res of this.inFlight.values()) res.shouldKeepAlive = false;
    const closed = new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    if (this.inFlight.size > 0) this.logger.log(`draining: waiting for ${this.inFlight.size} request(s) in flight`);
    while (!isClosed && Date.now() < deadline) {
      // Connections of finished requests become idle; close them so server.close() completes.
      server.closeIdleConnections();
      if (this.inFlight.size === 0) break;
      await sleep(Math.min(DRAIN_POLL_MS, Math.max(0, deadline - Date.now())));
    }
    const abandoned = this.inFlight.size;
    if (abandoned > 0) {
      this.logger.warn(
        `SHUTDOWN_TIMEOUT_MS (${this.config.shutdownTimeoutMs} ms) reached: closing ${abandoned} request(s) still in flight`,
      );
    }
    server.closeAllConnections();
    await closed;
    return { abandoned, elapsedMs: Date.now() - started };
  }
}
