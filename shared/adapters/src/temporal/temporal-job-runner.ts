import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  type Client,
} from '@temporalio/client';
import {
  failureMessage,
  isFinished,
  queuedJob,
  type JobRecord,
  type JobRunner,
  type JobStore,
  type NewJob,
} from '@guard/domain';
import type {
  activityExportJobWorkflow,
  bulkImportJobWorkflow,
  JobWorkflowOptions,
} from './jobs.workflow.js';

/** The task queue jobs workers poll unless GUARD_JOBS_TASK_QUEUE says otherwise. */
export const DEFAULT_JOBS_TASK_QUEUE = 'guard-jobs';

export const DEFAULT_JOB_WORKFLOW_OPTIONS: JobWorkflowOptions = {
  // A chunk of 10 policies or 20 pages of activity: seconds. Minutes only on a store in trouble.
  startToCloseTimeoutMs: 10 * 60_000,
  // Activities heartbeat after every policy and every page.
  heartbeatTimeoutMs: 30_000,
  retryInitialIntervalMs: 1_000,
  retryMaximumIntervalMs: 60_000,
  // About eight minutes of backoff, then the job fails with the step's last error.
  retryMaximumAttempts: 10,
};

export interface TemporalJobRunnerOptions {
  /** A connected client; the runner does not close it. */
  client: Client;
  /** Where jobs are recorded; the workers' activities write progress and results to the same. */
  store: JobStore;
  taskQueue?: string;
  /** Timeouts and retries of the job activities, for the jobs this runner starts. */
  workflowOptions?: Partial<JobWorkflowOptions>;
}

/** A job's spec (what its workflow takes) from its record. */
function specOf(job: JobRecord): NewJob {
  const base = { id: job.id, org_id: job.org_id, created_at: job.created_at };
  switch (job.kind) {
    case 'activity_export':
      return { ...base, kind: job.kind, input: job.input };
    case 'policy_bulk_import':
      return { ...base, kind: job.kind, input: job.input };
  }
}

/**
 * The distributed job runner: each job is a Temporal workflow (jobs.workflow.ts) run by the jobs
 * workers, whose activities write the job's progress and outcome to the job store, as the
 * in-process runner's do. The store is what `get` and `waitFor` answer from.
 *
 * The workflow id is the job id (from a business key), started with "reject duplicate" and "use
 * existing": a second start of the same job, whether its workflow is running or closed, answers
 * the job as stored and runs nothing new. A crash between recording a job and starting its
 * workflow leaves it queued; the next `start` or `waitFor` of that id starts it.
 */
export class TemporalJobRunner implements JobRunner {
  private readonly client: Client;
  private readonly store: JobStore;
  readonly taskQueue: string;
  private readonly workflowOptions: JobWorkflowOptions;

  constructor(options: TemporalJobRunnerOptions) {
    this.client = options.client;
    this.store = options.store;
    this.taskQueue = options.taskQueue ?? DEFAULT_JOBS_TASK_QUEUE;
    this.workflowOptions = { ...DEFAULT_JOB_WORKFLOW_OPTIONS, ...options.workflowOptions };
  }

  async start(job: NewJob): Promise<JobRecord> {
    // Recorded first, so that `get` shows the job queued at once, on any pod.
    const { job: stored } = await this.store.create(queuedJob(job));
    if (!isFinished(stored.status)) await this.startWorkflow(stored);
    return stored;
  }

  get(id: string): Promise<JobRecord | null> {
    return this.store.get(id);
  }

  async waitFor(id: string): Promise<JobRecord> {
    const job = await this.store.get(id);
    if (!job) throw new Error(`job ${id} is not in the job store`);
    if (isFinished(job.status)) return job;
    await this.startWorkflow(job);
    let failure: unknown = null;
    try {
      // Long-polls the server, following continued runs, until the workflow closes.
      await this.client.workflow.getHandle(id).result();
    } catch (err) {
      failure = err;
    }
    const done = await this.store.get(id);
    if (done && isFinished(done.status)) return done;
    // Terminated or timed out by an operator, or failed even to record its failure.
    throw new Error(
      `job ${id} ended without recording its outcome: ${failure ? failureMessage(failure) : 'its workflow closed early'}`,
    );
  }

  private async startWorkflow(job: JobRecord): Promise<void> {
    const spec = specOf(job);
    const common = {
      workflowId: job.id,
      taskQueue: this.taskQueue,
      // Closed: the job ran; running: it is running. Neither starts it again.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    };
    // The workflow type is its function's name in jobs.workflow.ts.
    try {
      if (spec.kind === 'activity_export') {
        await this.client.workflow.start<typeof activityExportJobWorkflow>(
          'activityExportJobWorkflow',
          {
            ...common,
            args: [spec, this.workflowOptions],
          },
        );
      } else {
        await this.client.workflow.start<typeof bulkImportJobWorkflow>('bulkImportJobWorkflow', {
          ...common,
          args: [spec, this.workflowOptions],
        });
      }
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}
