import { z } from 'zod';
import { POLICY_FAIL_MODES, PolicyMode, RuleMode, STREAM_MODES } from '@guard/domain';
import { ScannersConfigSchema } from '@guard/scoring';
import { IsoTimestamp, Threshold } from './common.js';

/** A compatible policy extension: how streamed completions are moderated. */
export const StreamModeSchema = z.enum(STREAM_MODES).meta({ id: 'StreamMode' });
export const PolicyFailModeSchema = z.enum(POLICY_FAIL_MODES).meta({ id: 'PolicyFailMode' });
const ScoringTimeout = z.number().int().min(50).max(600_000);

const RuleName = z.string().min(1).max(255);
export { RuleMode };
const Rules = z
  .record(RuleName, z.string().max(10_000))
  .refine((r) => Object.keys(r).length <= 500, {
    message: 'a policy holds at most 500 rules',
  });
const RuleModes = z.record(RuleName, RuleMode);
/** Largest `scanners_config` accepted, as JSON text: room for thousands of keywords and regexes. */
export const MAX_SCANNERS_CONFIG_BYTES = 64 * 1024;

/** A size bound on a free-form JSON field, checked on its serialised length (depth is bounded by the body parser). */
export function jsonSizeAtMost(bytes: number, what: string) {
  return (value: unknown, ctx: z.RefinementCtx) => {
    const size = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
    if (size > bytes)
      ctx.addIssue({
        code: 'custom',
        message: `${what} must be at most ${bytes} bytes of JSON, got ${size}`,
      });
  };
}

/** Checked against the scanner schema, but stored as sent (shorthands such as `pii: true` stay short). */
export const ScannersConfig = z
  .record(z.string(), z.unknown())
  .superRefine(jsonSizeAtMost(MAX_SCANNERS_CONFIG_BYTES, 'scanners_config'))
  .superRefine((value, ctx) => {
    const parsed = ScannersConfigSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        ctx.addIssue({
          code: 'custom',
          path: issue.path.filter((p) => typeof p !== 'symbol'),
          message: issue.message,
        });
    }
  })
  .meta({
    id: 'ScannersConfig',
    description: 'pii, secrets, system_prompt, keywords, regex: see shared/scoring/README.md',
  });

const policyFields = {
  name: z.string().min(1).max(255),
  description: z.string().max(10_000).optional(),
  categories: Rules.optional(),
  rules: Rules.optional().meta({
    description: 'Alias of `categories` (responses call them `rules`); send one of the two.',
  }),
  rule_modes: RuleModes.optional(),
  mode: PolicyMode.optional(),
  pre_violation_threshold: Threshold.optional(),
  pre_jb_threshold: Threshold.optional(),
  post_violation_threshold: Threshold.optional(),
  post_violation_jb_threshold: Threshold.optional(),
  scanners_config: ScannersConfig.optional(),
  block_message: z.string().max(2000).optional(),
  stream_mode: StreamModeSchema.nullable().optional().meta({
    description:
      'How streamed completions are moderated: `window` (default), `buffer` or `observe`; null in an update goes back to the server default.',
  }),
  fail_mode: PolicyFailModeSchema.nullable().optional().meta({
    description:
      'What a scoring that fails or runs out of time counts as: `fail_closed` (a violation, the default) or `fail_open` (no violation); either way the response says `error: true`. null in an update goes back to the server default (GUARD_FAIL_MODE).',
  }),
  scoring_timeout_ms: ScoringTimeout.nullable().optional().meta({
    description:
      'How long a scoring under this policy may take (50 to 600000 ms) before the fail mode answers; null in an update goes back to the server default (GUARD_SCORE_TIMEOUT_MS).',
  }),
};

function oneRuleSpelling(v: { categories?: unknown; rules?: unknown }, ctx: z.RefinementCtx): void {
  if (v.categories !== undefined && v.rules !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['rules'],
      message: 'send the rules as `categories` or as `rules` (an alias), not both',
    });
  }
}

/** Unknown fields are refused by name (422), so that a misspelt field is never silently dropped. */
export const PolicyCreateRequest = z
  .strictObject(policyFields)
  .superRefine(oneRuleSpelling)
  .meta({ id: 'PolicyCreateRequest' });
export type PolicyCreateRequest = z.infer<typeof PolicyCreateRequest>;

export const PolicyUpdateRequest = z
  .strictObject({ ...policyFields, name: policyFields.name.optional() })
  .superRefine(oneRuleSpelling)
  .meta({ id: 'PolicyUpdateRequest' });
export type PolicyUpdateRequest = z.infer<typeof PolicyUpdateRequest>;

/**
 * Export form, as accepted by import: `name` required. What an export or a read carries but a new
 * policy cannot take is accepted and ignored: `export_version`, timestamps, `is_preset`, and any
 * id (`id`, `_id`, `policy_id`, ...: new ids are generated). Anything else unknown is refused.
 */
const ignoredOnImport = {
  export_version: z.string().max(20).optional(),
  is_preset: z.boolean().optional(),
  created_at: z.string().max(100).optional(),
  updated_at: z.string().max(100).optional(),
};
const IGNORED_ID = /^(_?id|[a-z_]+_id)$/;
const importShape = { ...policyFields, ...ignoredOnImport };
export const PolicyImportItem = z
  .looseObject(importShape)
  .superRefine((v, ctx) => {
    for (const key of Object.keys(v)) {
      if (!(key in importShape) && !IGNORED_ID.test(key))
        ctx.addIssue({
          code: 'unrecognized_keys',
          keys: [key],
          path: [],
          message: `unknown field "${key}"`,
        });
    }
  })
  .superRefine(oneRuleSpelling)
  .meta({ id: 'PolicyImportItem' });
export const PolicyImportRequest = z
  .strictObject({ policy: PolicyImportItem })
  .meta({ id: 'PolicyImportRequest' });
export const BulkImportRequest = z
  .strictObject({ policies: z.array(z.unknown()).min(1).max(100) })
  .meta({ id: 'BulkImportRequest', description: '1 to 100 policies in export form.' });

/** A whole number sent in a query string: "abc" or "1.5" is named as such, not as NaN. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,15}$/, {
      error: (iss) =>
        `expected a whole number, got ${typeof iss.input === 'string' && iss.input.length <= 40 ? `"${iss.input}"` : 'a long string'}`,
    })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

export const PolicyListQuery = z.object({
  limit: queryInt(1, 1000).optional(),
  offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
});

/** Fields the response form and the export form share. */
const contentFields = {
  name: z.string(),
  description: z.string(),
  rule_modes: z.record(z.string(), RuleMode),
  mode: z.string(),
  pre_violation_threshold: z.number(),
  pre_jb_threshold: z.number(),
  post_violation_threshold: z.number(),
  post_violation_jb_threshold: z.number(),
  scanners_config: z.record(z.string(), z.unknown()),
  block_message: z.string(),
  stream_mode: StreamModeSchema.optional(),
  fail_mode: PolicyFailModeSchema.optional(),
  scoring_timeout_ms: z.number().int().optional(),
};

export const Policy = z
  .object({
    id: z.string(),
    ...contentFields,
    rules: z.record(z.string(), z.string()),
    is_preset: z.boolean(),
    created_at: IsoTimestamp,
    updated_at: IsoTimestamp,
  })
  .meta({ id: 'Policy' });

export const PolicyList = z
  .object({
    policies: z.array(Policy),
    total: z.number().int(),
    limit: z.number().int().nullable(),
    offset: z.number().int(),
    has_more: z.boolean(),
  })
  .meta({ id: 'PolicyList' });

export const PolicyExportItem = z
  .object({
    ...contentFields,
    categories: z.record(z.string(), z.string()),
    export_version: z.literal('1.0'),
  })
  .meta({ id: 'PolicyExportItem' });

export const PolicyExportAll = z
  .object({
    policies: z.array(PolicyExportItem),
    export_date: IsoTimestamp,
    export_version: z.literal('1.0'),
    total: z.number().int(),
  })
  .meta({ id: 'PolicyExportAll' });

export const BulkImportResponse = z
  .object({
    total: z.number().int(),
    successful: z.number().int(),
    failed: z.number().int(),
    results: z.array(
      z.object({
        name: z.string().nullable(),
        success: z.boolean(),
        id: z.string().nullable(),
        error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'BulkImportResponse' });

export const DeleteResponse = z
  .object({ id: z.string(), deleted: z.literal(true) })
  .meta({ id: 'DeleteResponse' });

const DiffEntry = z.object({
  op: z.enum(['add', 'remove', 'replace']),
  path: z.string(),
  old: z.unknown().optional(),
  new: z.unknown().optional(),
});
const Operation = z.enum(['create', 'update', 'import', 'bulk_import', 'delete']);

export const PolicyVersionList = z
  .object({
    policy_id: z.string(),
    versions: z.array(
      z.object({
        id: z.string(),
        operation: Operation,
        timestamp: IsoTimestamp,
        user_id: z.string(),
        diff: z.array(DiffEntry),
      }),
    ),
    total: z.number().int(),
  })
  .meta({ id: 'PolicyVersionList' });

export const PolicyAtVersion = z
  .object({
    id: z.string(),
    policy_id: z.string(),
    operation: Operation,
    timestamp: IsoTimestamp,
    user_id: z.string(),
    policy_state: Policy,
  })
  .meta({ id: 'PolicyAtVersion' });
