import type { Activity, ActivitySink, ActivityStore } from '@guard/domain';

/**
 * Collects the activities published during one turn of the event loop and writes them in one
 * store call (one SQLite transaction), so that heavy traffic costs one commit per batch rather
 * than one per request. `publish` resolves after the batch holding the activity is written:
 * callers answer only once their record is durable.
 */
export class BatchingActivitySink implements ActivitySink {
  private pending: { activity: Activity; done: () => void; fail: (e: unknown) => void }[] = [];
  private scheduled = false;
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ActivityStore,
    private readonly maxBatch = 1000,
  ) {}

  publish(activity: Activity): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.pending.push({ activity, done, fail });
      if (this.pending.length >= this.maxBatch) this.drain();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.drain());
      }
    });
  }

  private drain(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.inflight = this.inflight.then(async () => {
      try {
        await this.store.record(batch.map((b) => b.activity));
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.fail(err);
      }
    });
  }

  async flush(): Promise<void> {
    this.drain();
    await this.inflight;
  }
}
