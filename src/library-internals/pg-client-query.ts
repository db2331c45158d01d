import pg from 'pg';

/** A query's answer to whoever sent it: pg's callback, or the settling of its promise. */
export type QueryCallback = (err: Error | null, result?: unknown) => void;

/**
 * Internal: pg's Client with its `query` method replaced in a subclass, handed to pg.Pool as its
 * `Client` (checked against pg 8.23.1, pg-pool 3.14.0, @prisma/adapter-pg 7.10.1). No public API
 * offers a hook on every query a pool's clients send, by pg-pool and Prisma's adapter alike; this
 * relies on both sending every query through `client.query(config[, values][, callback])`, which
 * answers through the callback or, without one, a promise; a Submittable (a config with submit(),
 * such as a cursor) is returned as is. Canary: pg-client-query.spec.ts.
 *
 * Every query but a Submittable goes through `around`: it gets the query's config (text or
 * object) and `answer`, the sender's own callback, which it calls at most once (to fail the query
 * early, say); it returns the callback pg answers through instead.
 */
export function interceptedClient(around: (config: unknown, answer: QueryCallback) => QueryCallback): typeof pg.Client {
  const send = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  class InterceptedClient extends pg.Client {}
  (InterceptedClient.prototype as { query: unknown }).query = function query(
    this: pg.Client,
    config: unknown,
    values?: unknown,
    callback?: unknown,
  ): unknown {
    if (
      config !== null &&
      typeof config === 'object' &&
      typeof (config as { submit?: unknown }).submit === 'function'
    ) {
      return send.call(this, config, values, callback);
    }
    const cb = (typeof values === 'function' ? values : callback) as QueryCallback | undefined;
    if (cb !== undefined) {
      const done = around(config, cb);
      return typeof values === 'function' ? send.call(this, config, done) : send.call(this, config, values, done);
    }
    return new Promise((resolve, reject) => {
      const done = around(config, (err, result) => (err ? reject(err) : resolve(result)));
      (send.call(this, config, values) as Promise<unknown>).then(
        (result) => done(null, result),
        (err: unknown) => done(err as Error),
      );
    });
  };
  return InterceptedClient;
}
