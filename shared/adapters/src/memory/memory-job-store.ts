import {
  claimedJob,
  clone,
  isFinished,
  type JobPatch,
  type JobRecord,
  type JobStore,
} from '@guard/domain';

/** The in-memory twin of the job store (tests, and the in-process API harness). */
export class MemoryJobStore implements JobStore {
  private readonly jobs = new Map<string, JobRecord>();

  async create(job: JobRecord): Promise<{ job: JobRecord; created: boolean }> {
    const known = this.jobs.get(job.id);
    if (known) return { job: clone(known), created: false };
    this.jobs.set(job.id, clone(job));
    return { job: clone(job), created: true };
  }

  async get(id: string): Promise<JobRecord | null> {
    const job = this.jobs.get(id);
    return job ? clone(job) : null;
  }

  async update(id: string, patch: JobPatch): Promise<JobRecord | null> {
    const job = this.jobs.get(id);
    if (!job) return null;
    const next: JobRecord = { ...job, ...clone(patch) };
    this.jobs.set(id, next);
    return clone(next);
  }

  async claim(
    id: string,
    owner: string,
    nowMs: number,
    leaseMs: number,
    force = false,
  ): Promise<JobRecord | null> {
    const job = this.jobs.get(id);
    const next = job ? claimedJob(job, owner, nowMs, leaseMs, force) : null;
    if (!next) return null;
    this.jobs.set(id, next);
    return clone(next);
  }

  async listUnfinished(): Promise<JobRecord[]> {
    return [...this.jobs.values()]
      .filter((j) => !isFinished(j.status))
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0))
      .map(clone);
  }
}
