/** Injectable source of the current time, so tests can move past the getPet sunset. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
