/**
 * Waits for a condition instead of for a time: polls `condition` until it returns a value other
 * than undefined, null or false, and returns that value. A condition that throws counts as not
 * yet (a server still starting refuses connections); its last error is in the failure message.
 *
 * The timeout is a guard against a hang, not a bound the test asserts: generous, so that a busy
 * machine is slow, never wrong. Polling (rather than an event) because most conditions are
 * another process's state, seen only by asking.
 */
export interface WaitForOptions {
  /** What is awaited, for the failure message ("the access log line of req-1"). */
  what: string;
  /** Default 20 s. */
  timeoutMs?: number;
  /** Between two checks; default 25 ms. */
  intervalMs?: number;
}

export const WAIT_FOR_TIMEOUT_MS = 20_000;

export async function waitFor<T>(
  condition: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  { what, timeoutMs = WAIT_FOR_TIMEOUT_MS, intervalMs = 25 }: WaitForOptions,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== null && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why =
        lastError === undefined
          ? ''
          : ` (last check failed: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
