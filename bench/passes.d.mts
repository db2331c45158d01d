export function passOrder(names: readonly string[], pass: number): string[];
export function passRatios(
  names: readonly string[],
  runs: readonly ({ cpuUsPerReq?: number | null } | undefined)[],
): string;
