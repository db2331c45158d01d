import type helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PreparedHeader } from './outgoing-headers.js';

/**
 * Internal: how helmet's middleware works (checked against helmet 8.3.0): synchronously, by
 * `res.setHeader` and `res.removeHeader` alone, reading nothing of the request. That lets a
 * policy be run once, at start, against a recording response instead of a real one, and its
 * headers replayed on every request (http/http-edge.ts). helmet has no API that lists the
 * headers of a policy. Canary: helmet-recorder.spec.ts compares a recording with what helmet
 * does to a real response.
 */
export interface RecordedHeaders {
  set: [string, string | number | readonly string[]][];
  removed: string[];
  /** `set` checked and lowercased for putHeaders, made on first use (http/http-edge.ts). */
  prepared?: { set: PreparedHeader[]; removed: [string, string][] };
}

/** What a helmet middleware does to a response: the headers it sets and those it removes. */
export function recordHeaders(middleware: ReturnType<typeof helmet>): RecordedHeaders {
  const set = new Map<string, string | number | readonly string[]>();
  const removed: string[] = [];
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      set.set(name, value);
      return recorder;
    },
    removeHeader(name: string) {
      set.delete(name);
      removed.push(name);
    },
  };
  let completed = false;
  // The recorder has only the two methods helmet calls: a version that used any other would
  // throw here, at start, rather than send wrong headers.
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err instanceof Error ? err : new Error(String(err));
    completed = true;
  });
  // helmet is synchronous; a future version that is not would fail here, at start.
  if (!completed) throw new Error('helmet did not complete synchronously');
  return { set: [...set], removed };
}
