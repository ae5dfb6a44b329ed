import type { BulkImportResult, BulkItem } from '../policies/import-policies.js';
import type { ActivityExportJobInput } from './job-ports.js';

/** The per-item results of a bulk import, in item order. */
export type BulkImportItemResult = BulkImportResult['results'][number];

/** One chunk of a bulk import, with all an activity needs to import it exactly once. */
export interface ImportChunk {
  jobId: string;
  orgId: string;
  userId: string;
  /** When the job was created: the time part of the ids its policies get. */
  createdAt: string;
  /** Index of the first item of the chunk in the whole import. */
  start: number;
  items: BulkItem[];
  /** Items in the whole import, for progress. */
  total: number;
}

/**
 * The side effects jobs are made of. Orchestrations (run-*-job.ts) call only these, so that the
 * same orchestration runs in this process and as a Temporal workflow; `createJobActivities` builds
 * them over the ports. Every one is safe to run again after a crash: arguments are plain JSON and
 * every write is idempotent (absolute progress, ids derived from the job).
 */
export interface JobActivities {
  /** Marks the job running (keeps the first start time when it is resumed). */
  jobStarted(jobId: string): Promise<void>;
  /** Marks the job succeeded, with its result where it has one. */
  jobSucceeded(jobId: string, result: BulkImportResult | null): Promise<void>;
  jobFailed(jobId: string, error: string): Promise<void>;
  /**
   * Counts the next pages of an export job's frozen range from its checkpoint, saving the
   * checkpoint after each page; `done` once the range is exhausted.
   */
  countExportPages(
    jobId: string,
    orgId: string,
    input: ActivityExportJobInput,
  ): Promise<{ done: boolean }>;
  /** Imports one chunk of a bulk import; each policy's id comes from the job id and its index. */
  importPolicyChunk(chunk: ImportChunk): Promise<BulkImportItemResult[]>;
}

/** The innermost message of an error and its causes (a Temporal failure wraps the activity's). */
export function failureMessage(err: unknown): string {
  let e: unknown = err;
  let message = 'the job failed';
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (e.message) message = e.message;
    e = e.cause;
  }
  return message;
}
