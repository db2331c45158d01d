import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { watchChild, type WatchedChild } from '../support/child-process.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);

/**
 * A container engine for the deploy test, on a machine without Docker: Debian's podman 4.3 with
 * runc, serving Docker's API on a socket of its own (`podman system service`), which
 * docker-compose 1.29 talks to through DOCKER_HOST.
 */

/** What the test needs from Debian: the engine, the compose client, and the image builder's tools. */
export const DEBIAN_PACKAGES = [
  'podman',
  'runc',
  'docker-compose',
  'debootstrap',
  // Service names resolve on a compose network only with it installed before the network is made.
  'golang-github-containernetworking-plugin-dnsname',
];

/** Installs whichever of `packages` are missing (apt-get update first), bounded in time. */
export async function installDebianPackages(packages: string[]): Promise<void> {
  const missing: string[] = [];
  for (const pkg of packages) {
    const status = await run('dpkg-query', ['-W', '-f=${Status}', pkg]).then(
      (r) => r.stdout,
      () => '',
    );
    if (!status.includes('install ok installed')) missing.push(pkg);
  }
  if (missing.length === 0) return;
  try {
    await run(
      'sh',
      [
        '-c',
        `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing.join(' ')}`,
      ],
      { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (err) {
    throw new Error(
      `could not install ${missing.join(' ')} (run \`apt-get install -y ${missing.join(' ')}\`): ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/**
 * The engine's settings (CONTAINERS_CONF): no default ulimits (setting RLIMIT_NPROC/NOFILE is
 * refused here), cgroups managed by the runtime itself (no systemd), and runc (crun refuses this
 * kernel's hybrid cgroups).
 */
const CONTAINERS_CONF = `[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
`;

/**
 * Image builds get the open-file limit of this process: without a limit of its own a build step
 * gets the OCI default of 1024, too few for `npm ci`, which fails with EMFILE. Only the builds:
 * given any default ulimit, podman also sets RLIMIT_NPROC on every container it runs, which is
 * refused here. So images are built with `podman build` under this configuration, and the engine's
 * API (which docker-compose builds and runs through) keeps the one above.
 */
function buildContainersConf(openFiles: number): string {
  return CONTAINERS_CONF.replace('default_ulimits = []', `default_ulimits = ["nofile=${openFiles}:${openFiles}"]`);
}

export interface PodmanEngine {
  /** Environment for podman and docker-compose: CONTAINERS_CONF and DOCKER_HOST. */
  env: Record<string, string>;
  /** Environment for `podman build` (CONTAINERS_CONF with the open-file limit builds need). */
  buildEnv: Record<string, string>;
  /** `podman build --format docker` (the Docker format keeps HEALTHCHECK) of `context` as `tag`. */
  build(context: string, tag: string, timeoutMs?: number): Promise<void>;
  /** Runs podman with the engine's settings; its stdout. */
  podman(args: string[], timeoutMs?: number): Promise<string>;
  /** Stops the health checker and the API service (by its PID). */
  stop(): Promise<void>;
  output(): string;
}

/**
 * Starts podman's Docker-compatible API on `dir`/podman.sock, and a health checker: podman runs
 * containers' healthchecks from systemd timers, absent here, so every 2 s the test runs
 * `podman healthcheck run` on the running containers that have one (which `condition:
 * service_healthy` waits for).
 */
export async function startPodman(dir: string): Promise<PodmanEngine> {
  const conf = path.join(dir, 'containers.conf');
  writeFileSync(conf, CONTAINERS_CONF);
  const buildConf = path.join(dir, 'containers-build.conf');
  const openFiles = Number((await run('sh', ['-c', 'ulimit -Hn'])).stdout.trim());
  writeFileSync(buildConf, buildContainersConf(Number.isSafeInteger(openFiles) ? Math.min(openFiles, 1048576) : 65536));
  const socket = path.join(dir, 'podman.sock');
  const env = { CONTAINERS_CONF: conf, DOCKER_HOST: `unix://${socket}` };
  const buildEnv = { ...env, CONTAINERS_CONF: buildConf };
  const processEnv = { ...process.env, ...env };
  const podman = async (args: string[], timeoutMs = 120_000): Promise<string> =>
    (await run('podman', args, { env: processEnv, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 })).stdout;

  const child: ChildProcess = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], {
    env: processEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const service: WatchedChild = watchChild(child);
  await waitFor(
    async () => {
      if (service.done()) throw new Error(`podman system service exited:\n${service.output()}`);
      return (await ping(socket)) === 'OK';
    },
    { what: "podman's API on its socket", timeoutMs: 30_000, intervalMs: 100 },
  );

  let checking = true;
  const checker = (async () => {
    while (checking) {
      const started = Date.now();
      try {
        const lines = await podman(['ps', '--format', '{{.ID}} {{.Status}}'], 30_000);
        const withHealthcheck = lines
          .split('\n')
          .filter((l) => /\((starting|healthy|unhealthy)\)/.test(l))
          .map((l) => l.split(' ')[0]);
        // An unhealthy answer is the container's state, not the checker's failure.
        await Promise.all(withHealthcheck.map((id) => podman(['healthcheck', 'run', id], 30_000).catch(() => '')));
      } catch {
        // The engine is busy or stopping: the next round tries again.
      }
      const wait = 2000 - (Date.now() - started);
      if (checking && wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();

  return {
    env,
    buildEnv,
    async build(context, tag, timeoutMs = 900_000) {
      try {
        // --jobs 2: a Dockerfile's independent stages (the build and the runtime's npm ci) at once.
        await run('podman', ['build', '--format', 'docker', '--jobs', '2', '--quiet', '-t', tag, context], {
          env: { ...process.env, ...buildEnv },
          timeout: timeoutMs,
          maxBuffer: 64 * 1024 * 1024,
        });
      } catch (err) {
        const e = err as Error & { stdout?: string; stderr?: string };
        throw new Error(`podman build of ${context} as ${tag} failed:\n${(e.stdout ?? '') + (e.stderr ?? e.message)}`, {
          cause: err,
        });
      }
    },
    podman,
    output: service.output,
    async stop() {
      checking = false;
      await checker;
      await service.stop('SIGTERM', 10_000);
    },
  };
}

/** GET /_ping on the engine's socket: "OK" when it serves. */
function ping(socketPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', reject);
  });
}

/**
 * Ends podman's monitors (conmon) of exec sessions in the containers whose names start with
 * `namePrefix`, by PID: after an exec ends, its monitor waits 5 minutes (to keep its exit code)
 * even once the container is gone. Returns the PIDs signalled.
 */
export function stopExecMonitors(namePrefix: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // ended meanwhile
    }
    const name = args[args.indexOf('-n') + 1] ?? '';
    if (path.basename(args[0]) === 'conmon' && args.includes('--exec-attach') && name.startsWith(namePrefix)) {
      try {
        process.kill(Number(entry), 'SIGTERM');
        pids.push(Number(entry));
      } catch {
        // ended meanwhile
      }
    }
  }
  return pids;
}
