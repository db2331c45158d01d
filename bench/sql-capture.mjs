// A PostgreSQL wire-protocol relay between the service and the database that records the
// statements clients send (simple queries, and each Bind of an extended query with the text of its
// prepared statement and its parameters), so the bench can EXPLAIN exactly what a request ran,
// whichever layer wrote the SQL (Prisma's query compiler, a raw query, a prepared statement).
import { Buffer } from 'node:buffer';
import net from 'node:net';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Reads the NUL-terminated string at `at`: [text, the offset after its NUL]. */
function cstring(buf, at) {
  const end = buf.indexOf(0, at);
  return [buf.toString('utf8', at, end), end + 1];
}

/** The statements of one client connection, parsed from its messages as they pass. */
function frontendParser(onStatement) {
  let pending = Buffer.alloc(0);
  let startup = true;
  const prepared = new Map();
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      if (startup) {
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        const code = pending.readInt32BE(4);
        startup = code === SSL_REQUEST || code === GSSENC_REQUEST;
        pending = pending.subarray(length);
        continue;
      }
      if (pending.length < 5) return;
      const type = String.fromCharCode(pending[0]);
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      const body = pending.subarray(5, 1 + length);
      pending = pending.subarray(1 + length);
      if (type === 'Q') onStatement({ sql: cstring(body, 0)[0], params: [] });
      else if (type === 'P') {
        const [name, at] = cstring(body, 0);
        prepared.set(name, cstring(body, at)[0]);
      } else if (type === 'B') {
        let [, at] = cstring(body, 0);
        let name;
        [name, at] = cstring(body, at);
        const formats = [];
        const nFormats = body.readInt16BE(at);
        at += 2;
        for (let i = 0; i < nFormats; i++, at += 2) formats.push(body.readInt16BE(at));
        const nParams = body.readInt16BE(at);
        at += 2;
        const params = [];
        for (let i = 0; i < nParams; i++) {
          const len = body.readInt32BE(at);
          at += 4;
          const binary = (formats.length === 1 ? formats[0] : (formats[i] ?? 0)) === 1;
          if (len === -1) params.push(null);
          else
            params.push(binary ? { binary: body.toString('hex', at, at + len) } : body.toString('utf8', at, at + len));
          at += Math.max(len, 0);
        }
        onStatement({ sql: prepared.get(name) ?? '', params });
      }
    }
  };
}

/**
 * Listens on a free port of 127.0.0.1 and relays every connection to `target` ({host, port}).
 * `start()` begins recording (dropping what was recorded), `stop()` ends it and returns the
 * statements, in the order the relay saw them.
 */
export async function startSqlCapture(target) {
  let recording = null;
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    const parse = frontendParser((s) => recording?.push(s));
    client.on('data', (chunk) => {
      try {
        parse(chunk);
      } catch {
        /* a message the parser does not know: relayed all the same */
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    start() {
      recording = [];
    },
    stop() {
      const statements = recording ?? [];
      recording = null;
      return statements;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
