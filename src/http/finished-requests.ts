/**
 * Records of finished requests, reported in batches: each record is queued when its request ends,
 * and `report` gets every queued record at most `delayMs` later (or at once on flush()). The
 * access line and the duration histogram of a request are written from the batch, in one loop
 * over many requests, rather than one by one in each response's 'close' listener between other
 * requests' work (bench scenario listPets at a fixed rate, ledger lines logging and metrics).
 */
export class FinishedRequests<T> {
  private pending: T[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly report: (batch: readonly T[]) => void,
    private readonly delayMs = FINISHED_BATCH_MS,
  ) {}

  add(record: T): void {
    this.pending.push(record);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.delayMs);
      this.timer.unref();
    }
  }

  /** Reports what is queued now (a scrape of /metrics, the listener closing at shutdown). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.report(batch);
  }
}

/** Longest a finished request waits for its access line and its metrics. */
export const FINISHED_BATCH_MS = 10;
