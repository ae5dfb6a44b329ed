import type { BulkItem, BulkImportResult } from '../policies/import-policies.js';

/**
 * Long-running work (activity export, bulk policy import) as jobs: a record in a JobStore that
 * says where the job stands, and a JobRunner that executes the job's orchestration (jobs/*.job.ts)
 * in this process (embedded) or as a Temporal workflow (distributed). Plain data only: no
 * Temporal or database type crosses these ports.
 */

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export const JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'succeeded', 'failed'];

export interface JobProgress {
  /** Rows (activities, policies) the job has gone through. */
  rows: number;
  /** Pages (store reads, import chunks) the job has gone through. */
  pages: number;
}

/** The filters of an activity export job as the client sent them (times as epoch ms). */
export interface ActivityExportFilters {
  since: number | null;
  until: number | null;
  alarmOnly: boolean;
}

/**
 * The id range an export job reads, frozen when the job is created: the same rows are counted
 * and downloaded however often and wherever either runs.
 */
export interface ExportIdRange {
  /** Exclusive lower bound, or null for the beginning. */
  after: string | null;
  /** Exclusive upper bound: the settled watermark at creation, or `until` if earlier. */
  before: string;
}

export interface ActivityExportJobInput {
  filters: ActivityExportFilters;
  range: ExportIdRange;
  /** Rows per store read, for counting and for the download. */
  pageSize: number;
}

export interface BulkImportJobInput {
  /** Who asked: written into each imported policy's first version. */
  userId: string;
  items: BulkItem[];
}

/** What a job is: its kind and the input its orchestration reads. */
export type JobSpec =
  | { kind: 'activity_export'; input: ActivityExportJobInput }
  | { kind: 'policy_bulk_import'; input: BulkImportJobInput };

export type JobKind = JobSpec['kind'];

/** Where a running export job has got to: its counts and the last id counted. */
export interface ExportCheckpoint {
  cursor: string | null;
  rows: number;
  pages: number;
}

export interface JobState {
  status: JobStatus;
  progress: JobProgress;
  /** Export jobs: where counting got to, so that a resumed job goes on from there. */
  checkpoint: ExportCheckpoint | null;
  /** Bulk import: the per-item results (the answer of `/policies/bulk-import`). */
  result: BulkImportResult | null;
  /** Why a failed job failed. */
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
}

export type JobRecord = JobSpec &
  JobState & {
    /** Deterministic, from a business key: starting the same job twice runs it once. */
    id: string;
    org_id: string;
    created_at: string;
    /** How many times a runner took the job up (more than one: it was resumed). */
    attempts: number;
    /** The in-process runner holding the job, and until when (epoch ms); null when none. */
    lease_owner: string | null;
    lease_until: number | null;
  };

/** What a runner is asked to start: the job without its state. */
export type NewJob = JobSpec & { id: string; org_id: string; created_at: string };

/** Fields a job's orchestration changes as it runs. */
export type JobPatch = Partial<JobState>;

export interface JobStore {
  /**
   * Stores the job unless one with its id exists; answers the stored job either way, and whether
   * this call created it.
   */
  create(job: JobRecord): Promise<{ job: JobRecord; created: boolean }>;
  get(id: string): Promise<JobRecord | null>;
  /** Applies the patch to a known job atomically; answers the job after it, or null if unknown. */
  update(id: string, patch: JobPatch): Promise<JobRecord | null>;
  /**
   * Takes (or renews) the lease on an unfinished job for `owner` until `nowMs + leaseMs`: only if
   * no one holds it, `owner` does, the holder's lease ran out before `nowMs`, or `force`. Counts
   * an attempt when the job changes hands. Answers the job, or null when it was not taken.
   */
  claim(
    id: string,
    owner: string,
    nowMs: number,
    leaseMs: number,
    force?: boolean,
  ): Promise<JobRecord | null>;
  /** Jobs queued or running, oldest first: what a runner resumes at start. */
  listUnfinished(): Promise<JobRecord[]>;
}

export interface JobRunner {
  /**
   * Starts the job unless one with its id exists (then nothing new runs); answers the job as
   * stored.
   */
  start(job: NewJob): Promise<JobRecord>;
  get(id: string): Promise<JobRecord | null>;
  /** Resolves with the job once it has finished (succeeded or failed). */
  waitFor(id: string): Promise<JobRecord>;
}

/**
 * What a claim makes of a job, or null when it cannot be claimed: finished, or held by another
 * owner whose lease has not lapsed (unless `force`). A claim by a new owner counts an attempt.
 * Every JobStore applies this rule, each with its own way of making the read and the write one.
 */
export function claimedJob(
  job: JobRecord,
  owner: string,
  nowMs: number,
  leaseMs: number,
  force: boolean,
): JobRecord | null {
  if (isFinished(job.status)) return null;
  const free =
    force ||
    job.lease_owner === null ||
    job.lease_owner === owner ||
    (job.lease_until ?? 0) < nowMs;
  if (!free) return null;
  return {
    ...job,
    attempts: job.lease_owner === owner ? job.attempts : job.attempts + 1,
    lease_owner: owner,
    lease_until: nowMs + leaseMs,
  };
}

export function isFinished(status: JobStatus): boolean {
  return status === 'succeeded' || status === 'failed';
}

/** A fresh record for a job about to be started. */
export function queuedJob(job: NewJob): JobRecord {
  return {
    ...job,
    status: 'queued',
    progress: { rows: 0, pages: 0 },
    checkpoint: null,
    result: null,
    error: null,
    started_at: null,
    finished_at: null,
    attempts: 0,
    lease_owner: null,
    lease_until: null,
  };
}
