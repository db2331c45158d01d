// What one asynchronous write of log lines costs, by batch size: the measure behind the batched
// log destination (BatchedDestination in src/logging/app-logger.ts; docs/performance.md).
// Writes the same access line to a temporary file in batches of 1, 14, 50 and 160 lines with
// fs.write (what pino's asynchronous destination does), one write in flight at a time, twice in
// alternating order, and reports the process's CPU (user + system, every thread: the write runs
// on libuv's thread pool) per line.
//
//   node bench/log-writes.mjs                   on the Node running it
//   npx -y -p node@24 node bench/log-writes.mjs on Node 24, the production runtime
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LINES = 40_000;
const BATCHES = [1, 14, 50, 160];
const line =
  JSON.stringify({
    level: 'info',
    time: new Date().toISOString(),
    pid: process.pid,
    hostname: os.hostname(),
    requestId: 'b1f0c3e2-7d4c-4a53-9e1f-1234567890ab',
    method: 'GET',
    route: '/v1/pets/:petId',
    url: '/v1/pets/4242',
    status: 200,
    durationMs: 12.34,
    ip: '127.0.0.1',
    keyId: '12',
    msg: 'request completed',
  }) + '\n';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-writes-'));
const fd = fs.openSync(path.join(dir, 'out.log'), 'w');

async function run(batch) {
  const before = process.cpuUsage();
  for (let written = 0; written < LINES; written += batch) {
    const text = new Array(batch).fill(line).join('');
    await new Promise((resolve, reject) => fs.write(fd, text, 'utf8', (err) => (err ? reject(err) : resolve())));
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / LINES;
}

try {
  const results = new Map(BATCHES.map((b) => [b, []]));
  for (const order of [BATCHES, [...BATCHES].reverse()]) for (const b of order) results.get(b).push(await run(b));
  console.log(`Node ${process.version}, ${line.length}-byte lines, ${LINES} per run, CPU µs per line (two runs):`);
  for (const [b, us] of results)
    console.log(`  batches of ${String(b).padStart(3)} lines: ${us.map((u) => u.toFixed(2)).join(', ')}`);
} finally {
  fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
}
