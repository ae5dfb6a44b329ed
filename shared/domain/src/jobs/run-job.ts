import type { JobActivities } from './job-activities.js';
import type { NewJob } from './job-ports.js';
import { runActivityExportJob } from './run-activity-export-job.js';
import { runBulkImportJob } from './run-bulk-import-job.js';

/** The orchestration of a job by its kind: what a runner (in-process or a workflow) executes. */
export async function runJob(acts: JobActivities, job: NewJob): Promise<void> {
  switch (job.kind) {
    case 'activity_export':
      return runActivityExportJob(acts, job);
    case 'policy_bulk_import':
      await runBulkImportJob(acts, job);
      return;
  }
}
