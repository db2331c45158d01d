// The types of bench/profile-summary.mjs, for the tests written in TypeScript.
import type { CpuProfile } from './perf-profile.mjs';

export function nearestFunctions(profile: CpuProfile): Map<string, number>;

export function formatNearest(
  columns: { name: string; profile: CpuProfile; cpuUsPerReq: number }[],
  top?: number,
): string;
