import type { BulkImportResult } from '../policies/import-policies.js';
import type { BulkImportItemResult, JobActivities } from './job-activities.js';
import { failureMessage } from './job-activities.js';
import type { BulkImportJobInput } from './job-ports.js';

/** Policies per activity call: progress moves chunk by chunk, a retry redoes at most one chunk. */
export const BULK_IMPORT_CHUNK = 10;

/**
 * A bulk policy import job: import the items chunk by chunk and answer the per-item results of
 * `/policies/bulk-import`. One bad item never fails the others (the chunk reports it on its
 * item); a chunk that cannot be stored at all fails the job. Deterministic: no clock, no
 * randomness, no I/O but through `acts`.
 */
export async function runBulkImportJob(
  acts: Pick<JobActivities, 'jobStarted' | 'jobSucceeded' | 'jobFailed' | 'importPolicyChunk'>,
  job: { id: string; org_id: string; created_at: string; input: BulkImportJobInput },
): Promise<BulkImportResult | null> {
  await acts.jobStarted(job.id);
  const items = job.input.items;
  const results: BulkImportItemResult[] = [];
  try {
    for (let start = 0; start < items.length; start += BULK_IMPORT_CHUNK) {
      results.push(
        ...(await acts.importPolicyChunk({
          jobId: job.id,
          orgId: job.org_id,
          userId: job.input.userId,
          createdAt: job.created_at,
          start,
          items: items.slice(start, start + BULK_IMPORT_CHUNK),
          total: items.length,
        })),
      );
    }
  } catch (err) {
    await acts.jobFailed(job.id, failureMessage(err));
    return null;
  }
  const successful = results.filter((r) => r.success).length;
  const result: BulkImportResult = {
    total: results.length,
    successful,
    failed: results.length - successful,
    results,
  };
  await acts.jobSucceeded(job.id, result);
  return result;
}
