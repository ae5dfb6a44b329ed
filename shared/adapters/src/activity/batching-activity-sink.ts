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

  /** Records that could not be stored even on their own (each also failed its own request). */
  failedRecords = 0;

  constructor(
    private readonly store: ActivityStore,
    private readonly maxBatch = 1000,
    /** Told about every record that could not be stored, with its id (never its content). */
    private readonly onRecordFailed: (err: unknown, activityId: string) => void = () => undefined,
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
        if (batch.length === 1) this.failed(batch[0]!, err);
        // One bad record must not fail the requests it happened to share a batch with: retry
        // each alone, so only the records that cannot be stored at all fail.
        else for (const b of batch) await this.recordAlone(b);
      }
    });
  }

  private async recordAlone(b: {
    activity: Activity;
    done: () => void;
    fail: (e: unknown) => void;
  }): Promise<void> {
    try {
      await this.store.record([b.activity]);
      b.done();
    } catch (err) {
      this.failed(b, err);
    }
  }

  private failed(b: { activity: Activity; fail: (e: unknown) => void }, err: unknown): void {
    this.failedRecords++;
    this.onRecordFailed(err, b.activity.id);
    b.fail(err);
  }

  async flush(): Promise<void> {
    this.drain();
    await this.inflight;
  }
}
