// The types of bench/sched-probe.mjs, for the tests written in TypeScript.

/** How often the probe reads /proc, in milliseconds. */
export const SAMPLE_MS: number;

/**
 * One reading: per pid that ran or waited since the last, [µs on a CPU, µs in a run queue]; under
 * `threads`, the server's threads but its main one.
 */
export interface SchedSample {
  t: number;
  d: Record<string, [number, number]>;
}

export interface SchedSamples {
  names: Map<number, string>;
  samples: SchedSample[];
}

export interface CpuAround {
  serverRunMs: number;
  serverWaitMs: number;
  /** The server's other threads' time on a CPU (the key `threads` of the readings). */
  serverThreadsMs: number;
  others: { name: string; ms: number }[];
}

export function parseSamples(text: string): SchedSamples;

export function cpuAround(
  samples: SchedSamples,
  fromMs: number,
  toMs: number,
  serverPid: number,
  benchPid: number,
  probePid: number,
): CpuAround;

export function startSchedProbe(
  file: string,
  serverPid?: number,
): Promise<{ pid: number; stop(): Promise<SchedSamples> }>;
