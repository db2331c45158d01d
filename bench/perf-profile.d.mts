// The types of bench/perf-profile.mjs, for the tests written in TypeScript.

export function perfNodeFlags(dir: string, nodeBin?: string): string[];
export function perfProfPathSupported(nodeBin: string): boolean;
export const PERF_HZ: number;
export const PERF_RECORD_ARGS: string[];

/** A V8 CPU profile (what bench/ledger.mjs and bench/profile-summary.mjs read). */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; scriptId: string; url: string; lineNumber: number; columnNumber: number };
    children: number[];
  }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export function perfUnavailable(): string | null;

export function startPerf(pid: number, file: string): Promise<{ pid: number; stop(): Promise<void> }>;

export function perfProfile(file: string, jitDir: string | null): Promise<CpuProfile>;

export function perfToProfile(text: string): CpuProfile;
