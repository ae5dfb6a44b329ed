import { createHash } from 'node:crypto';
import { idFrom } from '@guard/platform';
import type { ActivityStore, PolicyStore } from '../ports.js';
import type { Principal } from '../types.js';
import { importBulkItem } from '../policies/import-policies.js';
import type { BulkImportItemResult, ImportChunk, JobActivities } from './job-activities.js';
import type { ExportCheckpoint, JobPatch, JobRecord, JobStore } from './job-ports.js';
import { BULK_IMPORT_CHUNK } from './run-bulk-import-job.js';

export interface JobActivityDeps {
  jobs: JobStore;
  activities: ActivityStore;
  policies: PolicyStore;
  now: () => Date;
  /** Called after each unit of work (a page, a policy): Temporal activities heartbeat here. */
  heartbeat?: () => void;
  /** Pages one `countExportPages` call reads before handing back to the orchestration. */
  pagesPerCall?: number;
}

/**
 * The ids of a bulk-imported policy and its first version: the job's creation time (so they sort
 * with the ids made around it), the item's index, and a digest of the job id. A retried import
 * writes the same ids, which the store refuses the second time.
 */
export function bulkImportIds(
  jobId: string,
  createdAt: string,
  index: number,
): { policy: string; version: string } {
  const time = idFrom(Date.parse(createdAt)).slice(0, 11);
  const tail = createHash('sha256').update(jobId).digest('hex').slice(0, 8);
  const counter = (n: number) => n.toString(16).padStart(5, '0');
  return {
    policy: `${time}${counter(index)}${tail}`,
    version: `${time}${counter(0x80000 + index)}${tail}`,
  };
}

/** The activities of every job kind, over the ports (the factory both runners use). */
export function createJobActivities(deps: JobActivityDeps): JobActivities {
  const heartbeat = deps.heartbeat ?? (() => undefined);
  const pagesPerCall = deps.pagesPerCall ?? 20;
  const update = async (id: string, patch: JobPatch): Promise<JobRecord> => {
    const job = await deps.jobs.update(id, patch);
    if (!job) throw new Error(`job ${id} is not in the job store`);
    return job;
  };
  const read = async (id: string): Promise<JobRecord> => {
    const job = await deps.jobs.get(id);
    if (!job) throw new Error(`job ${id} is not in the job store`);
    return job;
  };
  const now = () => deps.now().toISOString();

  return {
    async jobStarted(jobId) {
      const job = await read(jobId);
      await update(jobId, { status: 'running', started_at: job.started_at ?? now() });
    },

    async jobSucceeded(jobId, result) {
      await update(jobId, { status: 'succeeded', result, error: null, finished_at: now() });
    },

    async jobFailed(jobId, error) {
      await update(jobId, { status: 'failed', error, finished_at: now() });
    },

    async countExportPages(jobId, orgId, input) {
      const job = await read(jobId);
      let at: ExportCheckpoint = job.checkpoint ?? { cursor: null, rows: 0, pages: 0 };
      for (let n = 0; n < pagesPerCall; n++) {
        const page = await deps.activities.list(orgId, {
          after: at.cursor ?? input.range.after ?? undefined,
          before: input.range.before,
          alarmOnly: input.filters.alarmOnly,
          limit: input.pageSize,
        });
        const last = page.items.at(-1);
        if (last) at = { cursor: last.id, rows: at.rows + page.items.length, pages: at.pages + 1 };
        // Counts and cursor in one write: a crash between pages resumes exactly where it stood.
        await update(jobId, { checkpoint: at, progress: { rows: at.rows, pages: at.pages } });
        heartbeat();
        if (!page.has_more) return { done: true };
      }
      return { done: false };
    },

    async importPolicyChunk(chunk: ImportChunk) {
      // The verb checked the caller is an admin before it started the job; the job acts for them.
      const principal: Principal = {
        org_id: chunk.orgId,
        org_kind: 'standard',
        user_id: chunk.userId,
        key_id: '',
        role: 'admin',
        staff: false,
      };
      const policyDeps = {
        policies: deps.policies,
        now: deps.now,
        newId: () => {
          throw new Error('bulk-imported policies take ids derived from their job');
        },
      };
      const results: BulkImportItemResult[] = [];
      for (const [i, item] of chunk.items.entries()) {
        const ids = bulkImportIds(chunk.jobId, chunk.createdAt, chunk.start + i);
        results.push(await importBulkItem(policyDeps, principal, item, ids));
        heartbeat();
      }
      const done = chunk.start + chunk.items.length;
      await update(chunk.jobId, {
        progress: { rows: done, pages: Math.ceil(done / BULK_IMPORT_CHUNK) },
      });
      return results;
    },
  };
}
