// Deterministic shells over the job activities: each workflow runs the same orchestration as the
// embedded runner (run-*-job.ts), with every side effect an activity on a jobs worker. Runs in
// Temporal's workflow sandbox, so it imports only types, `@temporalio/workflow` and the
// orchestration modules themselves (pure: no Node built-ins, no clock, no randomness), by their
// own paths: the domain's index would pull in modules that do I/O.
import { proxyActivities } from '@temporalio/workflow';
import type { JobActivities, NewJob } from '@guard/domain';
import { failureMessage } from '@guard/domain/jobs/job-activities';
import { runActivityExportJob } from '@guard/domain/jobs/run-activity-export-job';
import { runBulkImportJob } from '@guard/domain/jobs/run-bulk-import-job';

/**
 * How the workflow calls its activities. Chosen by whoever starts the job (TemporalJobRunner) and
 * recorded with the workflow's input, so a replay on another worker uses the same values.
 */
export interface JobWorkflowOptions {
  /** Longest one activity attempt may run (a chunk of a bulk import, some pages of an export). */
  startToCloseTimeoutMs: number;
  /** An attempt silent this long is given up as dead (its worker died) and retried elsewhere. */
  heartbeatTimeoutMs: number;
  /** Retries of a failing attempt: exponential backoff from `initialIntervalMs`, doubling. */
  retryInitialIntervalMs: number;
  retryMaximumIntervalMs: number;
  /** Attempts in all, the first one included; then the job is failed with the last error. */
  retryMaximumAttempts: number;
}

export type ActivityExportJob = Extract<NewJob, { kind: 'activity_export' }>;
export type BulkImportJob = Extract<NewJob, { kind: 'policy_bulk_import' }>;

function activities(options: JobWorkflowOptions): JobActivities {
  return proxyActivities<JobActivities>({
    startToCloseTimeout: options.startToCloseTimeoutMs,
    heartbeatTimeout: options.heartbeatTimeoutMs,
    retry: {
      initialInterval: options.retryInitialIntervalMs,
      backoffCoefficient: 2,
      maximumInterval: options.retryMaximumIntervalMs,
      maximumAttempts: options.retryMaximumAttempts,
    },
  });
}

/**
 * The orchestrations record their own failures; this catches one in recording it (the job store
 * was down through every retry), so the record still ends failed when the store comes back.
 */
async function recordingFailure(
  acts: JobActivities,
  jobId: string,
  run: () => Promise<unknown>,
): Promise<void> {
  try {
    await run();
  } catch (err) {
    await acts.jobFailed(jobId, failureMessage(err));
  }
}

/** An activity export job (workflow id: the job id). */
export async function activityExportJobWorkflow(
  job: ActivityExportJob,
  options: JobWorkflowOptions,
): Promise<void> {
  const acts = activities(options);
  await recordingFailure(acts, job.id, () => runActivityExportJob(acts, job));
}

/** A bulk policy import job (workflow id: the job id). Its result is in the job record. */
export async function bulkImportJobWorkflow(
  job: BulkImportJob,
  options: JobWorkflowOptions,
): Promise<void> {
  const acts = activities(options);
  await recordingFailure(acts, job.id, () => runBulkImportJob(acts, job));
}
