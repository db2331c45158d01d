import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findOrInstall } from '../support/debian-package.js';

/*
 * The alerting rules and the compose stack's Prometheus configuration, checked by Prometheus's own
 * promtool (Debian's prometheus package): syntax, and the unit tests of deploy/prometheus/alerts.test.yml;
 * and the Alertmanager configuration they are sent to, by amtool (Debian's prometheus-alertmanager).
 * (That every metric they name is exported: test/operations/monitoring.e2e-spec.ts.)
 */
const run = promisify(execFile);

async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  return tool(findOrInstall('promtool', 'prometheus'), args);
}

async function tool(binary: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(binary, args, { timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('Prometheus alerting rules (promtool)', () => {
  it('are valid rules', async () => {
    const result = await promtool('check', 'rules', 'deploy/prometheus/alerts.yml');
    expect(result).toEqual({ code: 0, output: expect.stringMatching(/SUCCESS: \d+ rules found/) });
  });

  it('fire as their unit tests expect', async () => {
    const result = await promtool('test', 'rules', 'deploy/prometheus/alerts.test.yml');
    expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
  });

  it("are loaded by the compose stack's Prometheus configuration", async () => {
    // The configuration names the rules where the container mounts them; here, beside it.
    const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-prometheus-'));
    try {
      const config = readFileSync('deploy/prometheus/prometheus.yml', 'utf8').replace(
        '/etc/prometheus/alerts.yml',
        path.resolve('deploy/prometheus/alerts.yml'),
      );
      writeFileSync(path.join(dir, 'prometheus.yml'), config);
      const result = await promtool('check', 'config', path.join(dir, 'prometheus.yml'));
      expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS: 1 rule files found') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("send alerts to the stack's Alertmanager, whose configuration is valid", async () => {
    const config = readFileSync('deploy/prometheus/prometheus.yml', 'utf8');
    expect(config).toMatch(/alertmanagers:\s+- static_configs:\s+- targets: \["alertmanager:9093"\]/);
    expect(config).toMatch(/job_name: haproxy\s+static_configs:\s+- targets: \["haproxy:8404"\]/);
    const result = await tool(findOrInstall('amtool', 'prometheus-alertmanager'), [
      'check-config',
      'deploy/alertmanager/alertmanager.yml',
    ]);
    expect(result).toEqual({ code: 0, output: expect.stringMatching(/SUCCESS[\s\S]*1 receivers/) });
  });
});
