export declare function cpuMsOf(pid: number): number | null;
export declare function cpuSplitOf(pid: number): { userMs: number; systemMs: number } | null;
