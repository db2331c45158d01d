import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Reader } from './env.js';

/** How long a listen address's name may take to resolve at start-up before it is refused. */
export const LOOKUP_TIMEOUT_MS = 5000;

/**
 * `value` if it has the shape of a listen address (an IP address or a host name), else a problem
 * naming the variable `name` and loopback in its place; checkListenHost then resolves it.
 */
export function listenHostShape(env: Reader, name: string, value: string): string {
  if (isIP(value) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(value)) {
    env.problem(`${name} must be an IP address or a host name to listen on, got "${value.slice(0, 100)}"`, name);
    return '127.0.0.1';
  }
  return value;
}

/** Whether `address` (an IP address) can be listened on here: a wildcard or one of this machine's. */
function isLocalAddress(address: string): boolean {
  if (address === '0.0.0.0' || address === '::') return true;
  const bare = address.replace(/%.*$/, '').toLowerCase();
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((i) => i.address.replace(/%.*$/, '').toLowerCase() === bare),
  );
}

/** The address `host` resolves to as `listen` resolves it (its first), or why it does not, within `timeoutMs`. */
async function resolve(host: string, timeoutMs: number): Promise<{ address: string } | { error: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ error: string }>((done) => {
    timer = setTimeout(() => done({ error: `did not resolve within ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    return await Promise.race([
      lookup(host).then(
        ({ address }) => ({ address }),
        (err: NodeJS.ErrnoException) => ({ error: `does not resolve (${err.code ?? err.message})` }),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks that the server can listen on `host` (the value of variable `name`): an IP address of
 * this machine or a wildcard, or a name that resolves to one, within a bounded time. A problem
 * is recorded on `env`; nothing is listened on.
 */
export async function checkListenHost(
  env: Reader,
  name: string,
  host: string,
  timeoutMs = LOOKUP_TIMEOUT_MS,
): Promise<void> {
  const shown = `"${host.slice(0, 100)}"`;
  const hint = 'give an address of this machine (0.0.0.0: every interface) or a name that resolves to one';
  if (isIP(host) !== 0) {
    if (!isLocalAddress(host)) env.problem(`${name} ${shown} is not an address of this machine: ${hint}`, name);
    return;
  }
  const found = await resolve(host, timeoutMs);
  if ('error' in found) env.problem(`${name} ${shown} ${found.error}: ${hint}`, name);
  else if (!isLocalAddress(found.address)) {
    env.problem(
      `${name} ${shown} resolves to ${found.address}, which is not an address of this machine: ${hint}`,
      name,
    );
  }
}

/** A listener's port, by the variable that sets it; undefined: the listener is off. */
export interface ListenerPort {
  name: string;
  port: number | undefined;
}

/**
 * Records a problem when `listener`'s port is one of `others'`: two listeners of one process on
 * one port would stop the start on EADDRINUSE. Each listener's slice checks its port against
 * those of the slices before it (PORT, then METRICS_PORT, then ADMIN_PORT), so every pair is
 * checked once, with one message. Port 0 (the system picks a free one) never conflicts.
 */
export function checkOwnPort(env: Reader, listener: ListenerPort, others: readonly ListenerPort[]): void {
  if (listener.port === undefined || listener.port === 0) return;
  for (const other of others) {
    if (other.port === listener.port && env.ok(listener.name, other.name)) {
      env.problem(
        `${listener.name} must differ from ${other.name} (${other.port}): each listener needs a port of its own`,
        listener.name,
      );
      return;
    }
  }
}

/** Whether `host` names this machine's loopback interface only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/**
 * The warn line of a listener bound off loopback in production (`what` says what it serves), or
 * undefined: reachable from the network, it relies on its token and on the network's walls alone.
 */
export function exposureWarning(
  nodeEnv: string,
  variable: string,
  host: string,
  port: number,
  what: string,
): string | undefined {
  if (nodeEnv !== 'production' || isLoopbackHost(host)) return undefined;
  return (
    `${variable}=${host} is not loopback: ${what} is reachable from the network on ${host}:${port}; ` +
    `keep that address on an internal network, or set ${variable}=127.0.0.1`
  );
}
