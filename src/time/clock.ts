/**
 * Injectable source of the current time, so tests can move it: past the getPet sunset, across
 * rate-limit windows, beyond a key's expiry or an Idempotency-Key's 24 hours.
 */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
