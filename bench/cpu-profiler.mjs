// Preloaded into the service by `BENCH_PROFILE=1 npm run bench` (node --import): the first
// SIGUSR2 starts V8's CPU profiler, the second writes the profile to BENCH_PROFILE_FILE, so the
// profile covers one measured load and not start-up (`node --cpu-prof` covers the whole life).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
let running = false;

const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
  );

process.on('SIGUSR2', () => {
  const step = running
    ? post('Profiler.stop')
        .then(({ profile }) => writeFileSync(process.env.BENCH_PROFILE_FILE, JSON.stringify(profile)))
        // Disabled again, so the scenarios measured after the profiled run do not run with the
        // profiler's domain still enabled, which inflates their GC time and RSS.
        .then(() => post('Profiler.disable'))
    : post('Profiler.enable')
        .then(() => post('Profiler.setSamplingInterval', { interval: 500 }))
        .then(() => post('Profiler.start'));
  running = !running;
  step.catch((err) => console.error(`cpu-profiler: ${err.message}`));
});
