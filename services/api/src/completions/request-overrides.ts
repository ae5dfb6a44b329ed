import type { Request } from 'express';
import { ValidationError, type ValidationIssue } from '@guard/platform';
import {
  STREAM_MODES,
  type InlineRule,
  type StreamMode,
  type ThresholdOverrides,
} from '@guard/domain';

/** Per-request overrides sent as headers (decisions.md, "Protected completions"). */
export interface RequestOverrides {
  policy_id?: string | undefined;
  thresholds: ThresholdOverrides;
  inline: InlineRule[];
  stream_mode?: StreamMode | undefined;
  /** The provider key to use for this call instead of the configured one. */
  upstreamKey?: string | undefined;
}

const THRESHOLD_HEADERS = {
  'pre-violation': 'pre_violation_threshold',
  'pre-jailbreak': 'pre_jb_threshold',
  'post-violation': 'post_violation_threshold',
  'post-violation-jb': 'post_violation_jb_threshold',
} as const satisfies Record<string, keyof ThresholdOverrides>;

const CATEGORY_PREFIX = 'category-';
const MAX_CATEGORY_HEADERS = 50;

function single(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Reads the override headers; a bad value is a 422 naming the header. */
export function readOverrides(req: Request): RequestOverrides {
  const issues: ValidationIssue[] = [];
  const thresholds: ThresholdOverrides = {};
  for (const [header, field] of Object.entries(THRESHOLD_HEADERS)) {
    const raw = single(req, header);
    if (raw === undefined) continue;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
      issues.push({
        loc: ['header', header],
        msg: `must be a number from 0 to 1, got "${raw.slice(0, 40)}"`,
        type: 'value_error',
      });
    else thresholds[field] = n;
  }
  const inline: InlineRule[] = [];
  for (const [header, value] of Object.entries(req.headers)) {
    if (!header.startsWith(CATEGORY_PREFIX)) continue;
    const name = header.slice(CATEGORY_PREFIX.length);
    const description = Array.isArray(value) ? value.join(', ') : (value ?? '');
    if (!name || !description.trim())
      issues.push({
        loc: ['header', header],
        msg: 'a category header is `category-<name>: <description>`; both must be non-empty',
        type: 'value_error',
      });
    else inline.push({ name, description });
  }
  if (inline.length > MAX_CATEGORY_HEADERS)
    issues.push({
      loc: ['header'],
      msg: `at most ${MAX_CATEGORY_HEADERS} category-<name> headers are read, got ${inline.length}`,
      type: 'too_long',
    });
  const policyId = single(req, 'policy-id');
  if (policyId !== undefined && (policyId.length === 0 || policyId.length > 64))
    issues.push({ loc: ['header', 'policy-id'], msg: 'must be a policy id', type: 'value_error' });
  const mode = single(req, 'stream-mode');
  if (mode !== undefined && !(STREAM_MODES as readonly string[]).includes(mode))
    issues.push({
      loc: ['header', 'stream-mode'],
      msg: `must be one of ${STREAM_MODES.join(', ')}, got "${mode.slice(0, 40)}"`,
      type: 'enum',
    });
  if (issues.length) throw new ValidationError(issues);
  const upstreamKey = single(req, 'x-upstream-api-key')?.trim();
  return {
    policy_id: policyId,
    thresholds,
    inline,
    stream_mode: mode as StreamMode | undefined,
    upstreamKey: upstreamKey || undefined,
  };
}

/** Client headers a provider needs to see (API versions and beta flags), passed on as they are. */
const FORWARDED = ['anthropic-version', 'anthropic-beta', 'openai-organization', 'openai-project'];

export function forwardedHeaders(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of FORWARDED) {
    const v = single(req, h);
    if (v) out[h] = v;
  }
  return out;
}
