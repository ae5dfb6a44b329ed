import { ValidationError, type ValidationIssue } from '@guard/platform';
import {
  DEFAULT_BLOCK_MESSAGE,
  DEFAULT_THRESHOLDS,
  type Policy,
  type PolicyContent,
  type PolicyFailMode,
  type RuleMode,
} from '../types.js';
import type { StreamMode } from '../completions/stream-moderator.js';

/** A policy as a create/import request gives it: everything but the name may be left out. */
export interface PolicyInput {
  name: string;
  description?: string | undefined;
  categories?: Record<string, string> | undefined;
  /** Alias of `categories` (the response form calls them `rules`); the request schema refuses both at once. */
  rules?: Record<string, string> | undefined;
  rule_modes?: Record<string, RuleMode> | undefined;
  mode?: string | undefined;
  pre_violation_threshold?: number | undefined;
  pre_jb_threshold?: number | undefined;
  post_violation_threshold?: number | undefined;
  post_violation_jb_threshold?: number | undefined;
  scanners_config?: Record<string, unknown> | undefined;
  block_message?: string | undefined;
  /** null (in an update) goes back to the server's default. */
  stream_mode?: StreamMode | null | undefined;
  fail_mode?: PolicyFailMode | null | undefined;
  scoring_timeout_ms?: number | null | undefined;
}

export type PolicyPatch = Partial<PolicyInput>;

/** Validation problems name fields relative to the policy (`rule_modes.x`); transports place them. */
export function contentFromInput(input: PolicyInput): PolicyContent {
  const content: PolicyContent = {
    name: input.name,
    description: input.description ?? '',
    rules: { ...(input.categories ?? input.rules ?? {}) },
    rule_modes: { ...(input.rule_modes ?? {}) },
    mode: input.mode ?? 'content_moderation',
    pre_violation_threshold:
      input.pre_violation_threshold ?? DEFAULT_THRESHOLDS.pre_violation_threshold,
    pre_jb_threshold: input.pre_jb_threshold ?? DEFAULT_THRESHOLDS.pre_jb_threshold,
    post_violation_threshold:
      input.post_violation_threshold ?? DEFAULT_THRESHOLDS.post_violation_threshold,
    post_violation_jb_threshold:
      input.post_violation_jb_threshold ?? DEFAULT_THRESHOLDS.post_violation_jb_threshold,
    scanners_config: { ...(input.scanners_config ?? {}) },
    block_message: input.block_message ?? DEFAULT_BLOCK_MESSAGE,
    ...optionalFields(input),
  };
  checkRuleModes(content);
  return content;
}

/** Only the fields present in the patch change. Modes of rules that a patch removes go with them. */
export function applyPatch(current: PolicyContent, patch: PolicyPatch): PolicyContent {
  const next: PolicyContent = { ...current };
  if (patch.name !== undefined) next.name = patch.name;
  if (patch.description !== undefined) next.description = patch.description;
  if (patch.mode !== undefined) next.mode = patch.mode;
  if (patch.pre_violation_threshold !== undefined)
    next.pre_violation_threshold = patch.pre_violation_threshold;
  if (patch.pre_jb_threshold !== undefined) next.pre_jb_threshold = patch.pre_jb_threshold;
  if (patch.post_violation_threshold !== undefined)
    next.post_violation_threshold = patch.post_violation_threshold;
  if (patch.post_violation_jb_threshold !== undefined)
    next.post_violation_jb_threshold = patch.post_violation_jb_threshold;
  if (patch.scanners_config !== undefined) next.scanners_config = { ...patch.scanners_config };
  if (patch.block_message !== undefined) next.block_message = patch.block_message;
  for (const key of OPTIONAL_FIELDS) {
    if (patch[key] === null) delete next[key];
    else if (patch[key] !== undefined) Object.assign(next, { [key]: patch[key] });
  }
  const rules = patch.categories ?? patch.rules;
  if (rules !== undefined) {
    next.rules = { ...rules };
    if (patch.rule_modes === undefined) {
      next.rule_modes = Object.fromEntries(
        Object.entries(current.rule_modes).filter(([name]) => Object.hasOwn(next.rules, name)),
      );
    }
  }
  if (patch.rule_modes !== undefined) next.rule_modes = { ...patch.rule_modes };
  checkRuleModes(next);
  return next;
}

function checkRuleModes(content: PolicyContent): void {
  const issues: ValidationIssue[] = [];
  for (const name of Object.keys(content.rule_modes)) {
    if (!Object.hasOwn(content.rules, name)) {
      issues.push({
        loc: ['rule_modes', name],
        msg: `rule_modes names "${name}", which is not a rule of this policy`,
        type: 'value_error',
      });
    }
  }
  if (issues.length) throw new ValidationError(issues);
}

export function contentOf(p: Policy): PolicyContent {
  return {
    name: p.name,
    description: p.description,
    rules: p.rules,
    rule_modes: p.rule_modes,
    mode: p.mode,
    pre_violation_threshold: p.pre_violation_threshold,
    pre_jb_threshold: p.pre_jb_threshold,
    post_violation_threshold: p.post_violation_threshold,
    post_violation_jb_threshold: p.post_violation_jb_threshold,
    scanners_config: p.scanners_config,
    block_message: p.block_message,
    ...optionalFields(p),
  };
}

/** Fields a policy may leave unset (the server's default applies); null in an update unsets. */
const OPTIONAL_FIELDS = ['stream_mode', 'fail_mode', 'scoring_timeout_ms'] as const;

function optionalFields(p: PolicyInput | PolicyContent): Partial<PolicyContent> {
  const out: Partial<PolicyContent> = {};
  for (const key of OPTIONAL_FIELDS)
    if (p[key] !== undefined && p[key] !== null) Object.assign(out, { [key]: p[key] });
  return out;
}

export const EXPORT_VERSION = '1.0';

export interface PolicyExportItem {
  name: string;
  description: string;
  categories: Record<string, string>;
  rule_modes: Record<string, RuleMode>;
  mode: string;
  pre_violation_threshold: number;
  pre_jb_threshold: number;
  post_violation_threshold: number;
  post_violation_jb_threshold: number;
  scanners_config: Record<string, unknown>;
  block_message: string;
  stream_mode?: StreamMode | undefined;
  fail_mode?: PolicyFailMode | undefined;
  scoring_timeout_ms?: number | undefined;
  export_version: string;
}

export function toExportItem(p: Policy): PolicyExportItem {
  const { rules, ...rest } = contentOf(p);
  return { ...rest, categories: rules, export_version: EXPORT_VERSION };
}
