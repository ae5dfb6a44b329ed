import { z } from 'zod';
import { ScoreResult } from '@guard/domain';
import { IsoTimestamp } from './common.js';
import { queryInt } from './policies.js';

/**
 * One recorded decision (decisions.md, "Activity"), as export answers it and as the Kafka topic
 * `guard.activity.v1` carries it. Additive changes only within a version: new optional fields may
 * appear; a field is never removed, renamed or retyped without a new topic version.
 */
export const ACTIVITY_SCHEMA_VERSION = 1;

/** A monitor result: the analysis of the input (pre) or of the output (post). */
const Analysis = ScoreResult.omit({ alarm: true, phase: true })
  .loose()
  .meta({ id: 'ActivityAnalysis' });

export const ActivityRecord = z
  .object({
    id: z
      .string()
      .regex(/^[0-9a-f]{24}$/)
      .meta({ description: 'Time-ordered id, made when the decision was recorded' }),
    org_id: z.string(),
    created_at: IsoTimestamp.meta({
      description: 'When the decision was recorded: the time in the id, to the millisecond',
    }),
    endpoint: z.string().meta({
      description: '`monitor`, `chat.completions`, `responses`, `messages` or `generate_content`',
    }),
    policy_id: z.string().nullable(),
    policy_ids: z.array(z.string()),
    model: z.string().nullable(),
    api_key_id: z.string(),
    user_id: z.string(),
    alarm: z.boolean().meta({
      description: 'A block rule or the jailbreak signal crossed its threshold, or ipi/mutation',
    }),
    blocked: z.boolean(),
    pre_analysis: Analysis.nullable(),
    post_generation_analysis: Analysis.nullable(),
    latency_ms: z.number(),
    input_excerpt: z.string().nullable(),
    output_excerpt: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'ActivityRecord' });
export type ActivityRecord = z.infer<typeof ActivityRecord>;

/** An ISO 8601 time (query or body) to epoch milliseconds (a bad one is named, not NaN). */
const queryTime = z
  .string()
  .max(64)
  .transform((v, ctx) => {
    const ms = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : Number.NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({
        code: 'custom',
        message: `expected an ISO 8601 time such as 2026-11-23T10:00:00Z, got "${v.slice(0, 40)}"`,
      });
      return z.NEVER;
    }
    return ms;
  });

/** The time filters of an export, in the query of `GET /activity/export` and in a job's body. */
export const exportTimeWindow = {
  since: queryTime
    .optional()
    .meta({ description: 'ISO 8601; only activities recorded after it (exclusive)' }),
  until: queryTime
    .optional()
    .meta({ description: 'ISO 8601; only activities recorded before it (exclusive)' }),
};

const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const exportQueryFields = {
  cursor: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .meta({ description: 'The `next_cursor` of the previous page' }),
  ...exportTimeWindow,
  alarm_only: queryBool.default(false).meta({ description: 'Only activities with alarm true' }),
  search: z
    .string()
    .optional()
    .meta({ description: 'Accepted and ignored: free-text search is not available' }),
};

export const ActivityExportQuery = z.object({
  ...exportQueryFields,
  limit: queryInt(1, 10_000).default(1000),
});

export const ActivityStaffExportQuery = z.object({
  ...exportQueryFields,
  org_id: z.string().min(1).max(64),
  limit: queryInt(1, 1000).default(1000),
});

export const ActivityExportResponse = z
  .object({
    activities: z.array(ActivityRecord),
    next_cursor: z.string().nullable(),
    has_more: z.boolean(),
  })
  .meta({ id: 'ActivityExportResponse' });
