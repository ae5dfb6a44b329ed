import type { JobActivities } from './job-activities.js';
import { failureMessage } from './job-activities.js';
import type { ActivityExportJobInput } from './job-ports.js';

/**
 * An activity export job: count the frozen range page by page (the count is the progress a
 * client polls), then mark the job succeeded so that its download opens. The rows themselves are
 * streamed from the activity store at download time, over the same range and page size.
 * Deterministic: no clock, no randomness, no I/O but through `acts`.
 */
export async function runActivityExportJob(
  acts: Pick<JobActivities, 'jobStarted' | 'jobSucceeded' | 'jobFailed' | 'countExportPages'>,
  job: { id: string; org_id: string; input: ActivityExportJobInput },
): Promise<void> {
  await acts.jobStarted(job.id);
  try {
    for (;;) {
      const step = await acts.countExportPages(job.id, job.org_id, job.input);
      if (step.done) break;
    }
  } catch (err) {
    await acts.jobFailed(job.id, failureMessage(err));
    return;
  }
  await acts.jobSucceeded(job.id, null);
}
