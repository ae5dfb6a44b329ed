import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '@guard/platform';
import {
  failureMessage,
  isFinished,
  queuedJob,
  runJob,
  type JobActivities,
  type JobRecord,
  type JobRunner,
  type JobStore,
  type NewJob,
} from '@guard/domain';

export interface InProcessJobRunnerOptions {
  store: JobStore;
  /** Built by `createJobActivities` over this process's stores. */
  activities: JobActivities;
  logger: Logger;
  /** How long a claim on a job holds; renewed at a third of it while the job runs. */
  leaseMs?: number;
  /** How often unfinished jobs are looked for (a job whose process died, a job queued elsewhere). */
  sweepMs?: number;
  /** Jobs run at once in this process; more wait their turn, queued. */
  concurrency?: number;
  /** A job taken up this many times without finishing (its process kept dying) is failed. */
  maxAttempts?: number;
  /** How long `close` waits for running jobs before leaving them to be resumed. */
  closeGraceMs?: number;
  /** How often `waitFor` looks at a job run by another process. */
  pollMs?: number;
  now?: () => number;
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * The embedded job runner: executes each job's orchestration (`runJob`, the code the Temporal
 * workflows run) in this process, with the job store as its memory.
 *
 * Crashes: a job is run under a lease that its runner renews. Jobs left queued or running by a
 * process that died are *resumed*, not failed: at start (`resume({ takeOver: true })` when this is
 * the only process on the store), and by a sweep that takes up any unfinished job whose lease
 * lapsed (other worker processes). Resuming is safe because every job is idempotent: an export
 * goes on from its checkpoint, a bulk import rewrites the ids it derived. A job taken up
 * `maxAttempts` times without finishing is failed with a message that says so.
 */
export class InProcessJobRunner implements JobRunner {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly store: JobStore;
  private readonly acts: JobActivities;
  private readonly logger: Logger;
  private readonly leaseMs: number;
  private readonly sweepMs: number;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly closeGraceMs: number;
  private readonly pollMs: number;
  private readonly now: () => number;
  /** Jobs this process has queued or is running, and when each is done here. */
  private readonly local = new Map<string, Deferred>();
  private readonly queue: { id: string; force: boolean }[] = [];
  private readonly running = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: InProcessJobRunnerOptions) {
    this.store = options.store;
    this.acts = options.activities;
    this.logger = options.logger;
    this.leaseMs = options.leaseMs ?? 15_000;
    this.sweepMs = options.sweepMs ?? this.leaseMs;
    this.concurrency = options.concurrency ?? 2;
    this.maxAttempts = options.maxAttempts ?? 3;
    this.closeGraceMs = options.closeGraceMs ?? 10_000;
    this.pollMs = options.pollMs ?? 100;
    this.now = options.now ?? Date.now;
  }

  async start(job: NewJob): Promise<JobRecord> {
    const { job: stored, created } = await this.store.create(queuedJob(job));
    if (created) this.enqueue(stored.id, false);
    return stored;
  }

  get(id: string): Promise<JobRecord | null> {
    return this.store.get(id);
  }

  async waitFor(id: string): Promise<JobRecord> {
    for (;;) {
      const here = this.local.get(id);
      if (here) await here.promise;
      const job = await this.store.get(id);
      if (!job) throw new Error(`job ${id} is not in the job store`);
      if (isFinished(job.status)) return job;
      if (this.closed) throw new Error(`job ${id} is unfinished and this runner is closing`);
      // Run by another process (or about to be taken up by the sweep): look again shortly.
      if (!this.local.has(id)) await new Promise((r) => setTimeout(r, this.pollMs));
    }
  }

  /**
   * Takes up the jobs left unfinished in the store. `takeOver`: this is the only process using
   * the store, so every lease in it belongs to a process that is gone: resume at once instead of
   * waiting for the leases to lapse. Then keeps sweeping every `sweepMs`.
   */
  async resume(options: { takeOver: boolean }): Promise<number> {
    const found = await this.sweep(options.takeOver);
    this.sweeper ??= setInterval(() => {
      this.sweep(false).catch((err: unknown) => {
        this.logger.warn({ err }, 'job sweep failed; trying again later');
      });
    }, this.sweepMs);
    this.sweeper.unref();
    return found;
  }

  private async sweep(force: boolean): Promise<number> {
    if (this.closed) return 0;
    let n = 0;
    for (const job of await this.store.listUnfinished()) {
      if (this.local.has(job.id)) continue;
      const lapsed = job.lease_owner === null || (job.lease_until ?? 0) < this.now();
      if (!force && !lapsed) continue;
      n++;
      this.enqueue(job.id, force);
    }
    return n;
  }

  private enqueue(id: string, force: boolean): void {
    if (this.closed || this.local.has(id)) return;
    this.local.set(id, deferred());
    this.queue.push({ id, force });
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.concurrency && this.queue.length) {
      const next = this.queue.shift()!;
      const run = this.run(next.id, next.force)
        .catch((err: unknown) => {
          this.logger.error({ err, job_id: next.id }, 'job runner failed');
        })
        .finally(() => {
          this.running.delete(run);
          this.local.get(next.id)?.resolve();
          this.local.delete(next.id);
          this.pump();
        });
      this.running.add(run);
    }
  }

  private async run(id: string, force: boolean): Promise<void> {
    const job = await this.store.claim(id, this.owner, this.now(), this.leaseMs, force);
    if (!job) return; // finished meanwhile, or another process holds it
    const log = this.logger.child({ job_id: job.id, job_kind: job.kind, org_id: job.org_id });
    if (job.attempts > this.maxAttempts) {
      const error = `the job was interrupted ${job.attempts - 1} times (its process stopped before it finished); giving up`;
      await this.acts.jobFailed(job.id, error);
      log.error({ attempts: job.attempts }, 'job failed: interrupted too often');
      return;
    }
    const resumed = job.attempts > 1 || job.status === 'running';
    log.info(
      { attempts: job.attempts, progress: job.progress },
      resumed ? 'job resumed' : 'job started',
    );
    const started = this.now();
    const renew = setInterval(
      () => {
        this.store.claim(id, this.owner, this.now(), this.leaseMs).catch((err: unknown) => {
          log.warn({ err }, 'job lease could not be renewed');
        });
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    renew.unref();
    try {
      await runJob(this.acts, job);
    } catch (err) {
      // Orchestrations record their own failures; this is one in recording them (the store).
      log.error({ err }, 'job failed outside its steps');
      await this.acts.jobFailed(id, failureMessage(err)).catch(() => undefined);
    } finally {
      clearInterval(renew);
    }
    const done = await this.store.get(id);
    const fields = { status: done?.status, progress: done?.progress, ms: this.now() - started };
    if (done?.status === 'failed') log.warn({ ...fields, error: done.error }, 'job failed');
    else log.info(fields, 'job finished');
  }

  /** Stops taking up jobs; waits up to `closeGraceMs` for running ones, which resume later otherwise. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.queue.length = 0;
    const all = Promise.allSettled([...this.running]);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => {
      timer = setTimeout(r, this.closeGraceMs);
      timer.unref();
    });
    await Promise.race([all, grace]);
    clearTimeout(timer);
    for (const d of this.local.values()) d.resolve();
  }
}
