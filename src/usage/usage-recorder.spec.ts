import { MetricsService } from '../metrics/metrics.service.js';
import { Clock } from '../time/clock.js';
import type { UsageConfig } from '../config/usage.config.js';
import type { KeyUsageRepository } from './key-usage.repository.js';
import type { UsageRow } from './usage-counts.js';
import { UsageRecorder } from './usage-recorder.js';

class StepClock extends Clock {
  ms = Date.UTC(2026, 10, 27, 6, 59, 59);
  now(): Date {
    return new Date(this.ms);
  }
}

/** A repository that writes into an array, or fails while `down`. */
class FakeRows {
  down = false;
  readonly writes: UsageRow[][] = [];
  add(rows: readonly UsageRow[]): Promise<void> {
    if (this.down) return Promise.reject(new Error('connection refused'));
    this.writes.push([...rows]);
    return Promise.resolve();
  }
}

function recorder() {
  const clock = new StepClock();
  const rows = new FakeRows();
  const metrics = new MetricsService();
  const config: UsageConfig = { usageFlushMs: 10_000, usageRetentionDays: 400 };
  const usage = new UsageRecorder(rows as unknown as KeyUsageRepository, clock, config, metrics);
  return { clock, rows, metrics, usage };
}

const value = async (metrics: MetricsService, name: string) =>
  (await metrics.registry.getSingleMetric(name)?.get())?.values[0]?.value;

describe('UsageRecorder', () => {
  it('keeps the counts of a failed write and writes them with the next, nothing lost or doubled', async () => {
    const { clock, rows, metrics, usage } = recorder();
    const hour6 = Date.UTC(2026, 10, 27, 6);
    usage.record('1', 'listPets', clock.ms, false);
    usage.record('1', 'listPets', clock.ms, true);
    rows.down = true;
    expect(await usage.flush()).toBe(false);
    expect(await value(metrics, 'usage_flush_failures_total')).toBe(1);
    clock.ms += 2_000; // now in the next hour
    usage.record('1', 'listPets', clock.ms, false);
    usage.record('2', 'createPet', clock.ms, false);
    expect(await usage.flush()).toBe(false);
    expect(usage.lagSeconds()).toBe(2);
    rows.down = false;
    expect(await usage.flush()).toBe(true);
    expect(rows.writes).toEqual([
      [
        { keyId: '1', hour: hour6, operation: 'listPets', requests: 2, limited: 1 },
        { keyId: '1', hour: hour6 + 3_600_000, operation: 'listPets', requests: 1, limited: 0 },
        { keyId: '2', hour: hour6 + 3_600_000, operation: 'createPet', requests: 1, limited: 0 },
      ],
    ]);
    expect(await value(metrics, 'usage_flush_failures_total')).toBe(2);
    expect(await value(metrics, 'usage_flush_requests_total')).toBe(4);
    expect(await value(metrics, 'usage_flush_rows_total')).toBe(3);
    expect(usage.lagSeconds()).toBe(0);
    // Nothing held: nothing written, and the lag starts again from now.
    clock.ms += 5_000;
    expect(await usage.flush()).toBe(true);
    expect(rows.writes).toHaveLength(1);
    expect(usage.lagSeconds()).toBe(0);
  });

  it('writes what it holds on shutdown, after a write already under way', async () => {
    const { clock, rows, usage } = recorder();
    usage.record('5', 'getPet', clock.ms, false);
    const first = usage.flush();
    usage.record('5', 'getPet', clock.ms, false); // counted while the first write is under way
    await usage.beforeApplicationShutdown();
    await first;
    expect(rows.writes.flat().reduce((n, r) => n + r.requests, 0)).toBe(2);
  });
});
