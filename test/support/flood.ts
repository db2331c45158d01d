/** One response of a flood: its status, JSON body and headers. */
export interface FloodResult {
  status: number;
  body: { code?: string; status?: number; [k: string]: unknown };
  headers: Headers;
}

/** Sends `count` requests to `url`, `concurrency` at a time; each gets its own request init from `init(i)`. */
export async function flood(
  url: string,
  count: number,
  concurrency: number,
  init: (i: number) => RequestInit,
): Promise<FloodResult[]> {
  const results: FloodResult[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) {
        const res = await fetch(url, init(i));
        results[i] = { status: res.status, body: (await res.json()) as FloodResult['body'], headers: res.headers };
      }
    }),
  );
  return results;
}

/** `status code` of a result, for comparing whole floods at once. */
export const outcome = (r: FloodResult): string => `${r.status} ${r.body.code ?? ''}`.trimEnd();
