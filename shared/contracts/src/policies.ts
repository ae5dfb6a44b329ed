import { z } from 'zod';
import { POLICY_MODES, RULE_MODES } from '@guard/domain';
import { ScannersConfigSchema } from '@guard/scoring';
import { IsoTimestamp, Threshold } from './common.js';

const RuleName = z.string().min(1).max(255);
export const RuleMode = z.enum(RULE_MODES as [string, ...string[]]).meta({ id: 'RuleMode' });
const Rules = z.record(RuleName, z.string().max(10_000)).refine((r) => Object.keys(r).length <= 500, {
  message: 'a policy holds at most 500 rules',
});
const RuleModes = z.record(RuleName, z.enum(['block', 'observe', 'disabled']));
/** Checked against the scanner schema, but stored as sent (shorthands such as `pii: true` stay short). */
export const ScannersConfig = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const parsed = ScannersConfigSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path.filter((p) => typeof p !== 'symbol'), message: issue.message });
    }
  })
  .meta({ id: 'ScannersConfig', description: 'pii, secrets, system_prompt, keywords, regex: see shared/scoring/README.md' });

const policyFields = {
  name: z.string().min(1).max(255),
  description: z.string().max(10_000).optional(),
  categories: Rules.optional(),
  rule_modes: RuleModes.optional(),
  mode: z.enum(POLICY_MODES).optional(),
  pre_violation_threshold: Threshold.optional(),
  pre_jb_threshold: Threshold.optional(),
  post_violation_threshold: Threshold.optional(),
  post_violation_jb_threshold: Threshold.optional(),
  scanners_config: ScannersConfig.optional(),
  block_message: z.string().max(2000).optional(),
};

export const PolicyCreateRequest = z.object(policyFields).meta({ id: 'PolicyCreateRequest' });
export type PolicyCreateRequest = z.infer<typeof PolicyCreateRequest>;

export const PolicyUpdateRequest = z
  .object({ ...policyFields, name: policyFields.name.optional() })
  .meta({ id: 'PolicyUpdateRequest' });
export type PolicyUpdateRequest = z.infer<typeof PolicyUpdateRequest>;

/** Export form, as accepted by import: `name` required, ids and export_version ignored. */
export const PolicyImportItem = z.object(policyFields).meta({ id: 'PolicyImportItem' });
export const PolicyImportRequest = z.object({ policy: PolicyImportItem }).meta({ id: 'PolicyImportRequest' });
export const BulkImportRequest = z
  .object({ policies: z.array(z.unknown()).min(1).max(100) })
  .meta({ id: 'BulkImportRequest', description: '1 to 100 policies in export form.' });

export const PolicyListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).default(0),
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
  .object({ ...contentFields, categories: z.record(z.string(), z.string()), export_version: z.literal('1.0') })
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
      z.object({ name: z.string().nullable(), success: z.boolean(), id: z.string().nullable(), error: z.string().nullable() }),
    ),
  })
  .meta({ id: 'BulkImportResponse' });

export const DeleteResponse = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeleteResponse' });

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
      z.object({ id: z.string(), operation: Operation, timestamp: IsoTimestamp, user_id: z.string(), diff: z.array(DiffEntry) }),
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
