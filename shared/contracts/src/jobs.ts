import { z } from 'zod';
import { IsoTimestamp } from './common.js';
import { exportTimeWindow } from './activity.js';

/** The filters of `GET /activity/export`, as a JSON body. */
export const ActivityExportJobRequest = z
  .object({
    ...exportTimeWindow,
    alarm_only: z.boolean().default(false).meta({ description: 'Only activities with alarm true' }),
  })
  .strict()
  .meta({ id: 'ActivityExportJobRequest' });
export type ActivityExportJobRequest = z.infer<typeof ActivityExportJobRequest>;

export const JobStatus = z.enum(['queued', 'running', 'succeeded', 'failed']);

export const ActivityExportJob = z
  .object({
    id: z
      .string()
      .meta({ description: 'The job id; its download is at /activity/export-jobs/{id}/download' }),
    status: JobStatus.meta({
      description: 'queued, running, succeeded (download open) or failed (see error)',
    }),
    filters: z.object({
      since: IsoTimestamp.nullable(),
      until: IsoTimestamp.nullable(),
      alarm_only: z.boolean(),
    }),
    progress: z
      .object({ rows: z.number().int().min(0), pages: z.number().int().min(0) })
      .meta({ description: 'Activities and pages counted so far (the totals once succeeded)' }),
    created_at: IsoTimestamp,
    started_at: IsoTimestamp.nullable(),
    finished_at: IsoTimestamp.nullable(),
    error: z.string().nullable().meta({ description: 'Why the job failed; null otherwise' }),
  })
  .meta({ id: 'ActivityExportJob' });
export type ActivityExportJob = z.infer<typeof ActivityExportJob>;

export const JobIdParams = z.object({ id: z.string().min(1).max(200) });

/**
 * `Idempotency-Key` of `POST /policies/bulk-import`: a retry with the same key and body joins
 * the import already made (or under way) instead of importing again.
 */
export const IdempotencyKey = z.string().min(1).max(200).optional().meta({
  description:
    'Optional. A retry with the same key and body answers the import already made instead of importing again',
});
