import { AppError, notFound, ValidationError } from '@guard/platform';
import type { ActivityStore } from '../ports.js';
import type { Activity, Principal } from '../types.js';
import { requireAdmin } from '../policies/deps.js';
import type { ActivityExportFilters, JobRecord, JobRunner, JobStatus } from '../jobs/job-ports.js';
import { exportIdRange } from './export-activity.js';

export interface ActivityExportJobDeps {
  jobs: JobRunner;
  activities: ActivityStore;
  newId: () => string;
  now: () => Date;
  /** As for export: only activity older than this is read (the longest ingest lag). */
  settleMs: number;
  /** Rows per store read, counting and downloading. */
  pageSize: number;
}

/** An export job as clients see it. */
export interface ActivityExportJobView {
  id: string;
  status: JobStatus;
  filters: { since: string | null; until: string | null; alarm_only: boolean };
  progress: { rows: number; pages: number };
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  error: string | null;
}

type ExportJob = Extract<JobRecord, { kind: 'activity_export' }>;

function view(job: ExportJob): ActivityExportJobView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const f = job.input.filters;
  return {
    id: job.id,
    status: job.status,
    filters: { since: iso(f.since), until: iso(f.until), alarm_only: f.alarmOnly },
    progress: job.progress,
    created_at: job.created_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    error: job.error,
  };
}

/**
 * POST /activity/export-jobs: the caller's organization, admins only. The id range is frozen
 * now (the settled watermark of this moment, or `until` if earlier), so that the job counts and
 * the download streams the same rows whenever they run.
 */
export async function startActivityExportJob(
  deps: ActivityExportJobDeps,
  principal: Principal,
  filters: ActivityExportFilters,
): Promise<ActivityExportJobView> {
  requireAdmin(principal);
  if (filters.since !== null && filters.until !== null && filters.until <= filters.since)
    throw ValidationError.single(
      ['body', 'until'],
      'must be later than `since` (both bounds are exclusive)',
      'value_error',
    );
  const range = exportIdRange(deps, principal.org_id, {
    since: filters.since ?? undefined,
    until: filters.until ?? undefined,
  });
  const job = await deps.jobs.start({
    id: deps.newId(),
    org_id: principal.org_id,
    created_at: deps.now().toISOString(),
    kind: 'activity_export',
    input: {
      filters,
      range: { after: range.after ?? null, before: range.before },
      pageSize: deps.pageSize,
    },
  });
  return view(exportJob(job, principal));
}

/** A job of the caller's organization, or 404: another org's job is not known here. */
async function findExportJob(
  deps: ActivityExportJobDeps,
  principal: Principal,
  id: string,
): Promise<ExportJob> {
  requireAdmin(principal);
  const job = await deps.jobs.get(id);
  return exportJob(job, principal, id);
}

function exportJob(job: JobRecord | null, principal: Principal, id = job?.id ?? ''): ExportJob {
  if (!job || job.org_id !== principal.org_id || job.kind !== 'activity_export')
    throw notFound(`Export job ${id}`);
  return job;
}

/** GET /activity/export-jobs/{id}: status and progress. */
export async function getActivityExportJob(
  deps: ActivityExportJobDeps,
  principal: Principal,
  id: string,
): Promise<ActivityExportJobView> {
  return view(await findExportJob(deps, principal, id));
}

/**
 * GET /activity/export-jobs/{id}/download: the job's rows, oldest first, page by page from the
 * activity store over the range the job froze. Checked before the first byte: a job that has not
 * succeeded is a 409 CONFLICT saying where it stands.
 */
export async function openActivityExportDownload(
  deps: ActivityExportJobDeps,
  principal: Principal,
  id: string,
): Promise<AsyncIterable<Activity[]>> {
  const job = await findExportJob(deps, principal, id);
  if (job.status !== 'succeeded')
    throw new AppError(
      'CONFLICT',
      job.status === 'failed'
        ? `Export job ${id} failed (${job.error ?? 'unknown error'}); start a new one`
        : `Export job ${id} is ${job.status}; download it once its status is succeeded`,
      { status: job.status },
    );
  return exportPages(deps.activities, job);
}

async function* exportPages(activities: ActivityStore, job: ExportJob): AsyncGenerator<Activity[]> {
  const { range, filters, pageSize } = job.input;
  let after = range.after ?? undefined;
  for (;;) {
    const page = await activities.list(job.org_id, {
      after,
      before: range.before,
      alarmOnly: filters.alarmOnly,
      limit: pageSize,
    });
    if (page.items.length) yield page.items;
    const last = page.items.at(-1);
    if (!page.has_more || !last) return;
    after = last.id;
  }
}
