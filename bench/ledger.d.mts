// The types of bench/ledger.mjs, for the tests written in TypeScript.
import type { CpuProfile } from './perf-profile.mjs';

export const LAYERS: string[];

export interface Ledger {
  totalMs: number;
  busyMs: number;
  idleMs: number;
  layers: { layer: string; ms: number; share: number }[];
  unmatched: { name: string; selfMs: number }[];
  warnings: string[];
}

export function ledger(profile: CpuProfile): Ledger;

export function formatLedger(columns: { name: string; ledger: Ledger; cpuUsPerReq: number | null }[]): string;
