import { notFound } from '@guard/platform';
import type { ScoreRequest, ScoreRule, ScoreThresholds } from '../scoring/score-contract.js';
import { findPreset, PRESET_POLICIES } from '../presets.js';
import type { OrgStore, PolicyStore } from '../ports.js';
import {
  DEFAULT_BLOCK_MESSAGE,
  DEFAULT_THRESHOLDS,
  type Policy,
  type PolicyFailMode,
  type Principal,
} from '../types.js';
import type { InlineRule } from './monitor-input.js';
import type { StreamMode } from '../completions/stream-moderator.js';

/** What scoring needs from the policies in force, merged. */
export interface EffectivePolicy {
  policy_id: string | null;
  policy_ids: string[];
  rules: ScoreRule[];
  thresholds: ScoreThresholds;
  mode: string;
  scanners_config: Record<string, unknown>;
  block_message: string;
  /** The first policy's `stream_mode`, if it sets one. */
  stream_mode: StreamMode | null;
  /** See ScoreRequest.policy_revision: set when rules and scanners are the stored policies' own. */
  policy_revision: string | undefined;
  /** The first policy's `fail_mode` and `scoring_timeout_ms`, if it sets them. */
  fail_mode: PolicyFailMode | null;
  scoring_timeout_ms: number | null;
}

export interface ThresholdOverrides {
  pre_violation_threshold?: number | undefined;
  pre_jb_threshold?: number | undefined;
  post_violation_threshold?: number | undefined;
  post_violation_jb_threshold?: number | undefined;
}

export interface ResolveRequest {
  policy_id?: string | undefined;
  policy_ids?: string[] | undefined;
  inline: InlineRule[];
  scanner_configs?: Record<string, unknown> | undefined;
  overrides?: ThresholdOverrides | undefined;
}

const BASIC_CONTENT_SAFETY = PRESET_POLICIES[0]!;

/**
 * decisions.md: rules of `policy_ids` merge in list order (earlier wins a name clash), inline
 * rules come last; thresholds, mode and scanners come from the first policy. Without any policy
 * or inline rule: the org's default policy, else the preset "Basic Content Safety".
 */
export async function resolvePolicies(
  deps: { policies: PolicyStore; orgs: OrgStore },
  principal: Principal,
  req: ResolveRequest,
): Promise<EffectivePolicy> {
  const ids = [...(req.policy_id ? [req.policy_id] : []), ...(req.policy_ids ?? [])].filter(
    (id, i, all) => all.indexOf(id) === i,
  );
  const policies: Policy[] = [];
  for (const id of ids) policies.push(await loadPolicy(deps, principal, id));
  if (policies.length === 0 && req.inline.length === 0) {
    const org = await deps.orgs.get(principal.org_id);
    const def = org?.default_policy_id
      ? await loadPolicy(deps, principal, org.default_policy_id).catch(() => null)
      : null;
    policies.push(def ?? BASIC_CONTENT_SAFETY);
  }

  const rules: ScoreRule[] = [];
  const seen = new Set<string>();
  for (const p of policies) {
    for (const [name, description] of Object.entries(p.rules)) {
      if (seen.has(name)) continue;
      seen.add(name);
      rules.push({
        name,
        description,
        mode: Object.hasOwn(p.rule_modes, name) ? p.rule_modes[name]! : 'block',
      });
    }
  }
  for (const r of req.inline) {
    if (seen.has(r.name)) continue;
    seen.add(r.name);
    rules.push({ name: r.name, description: r.description, mode: 'block' });
  }

  const first = policies[0];
  const base: ScoreThresholds = first
    ? {
        pre_violation_threshold: first.pre_violation_threshold,
        pre_jb_threshold: first.pre_jb_threshold,
        post_violation_threshold: first.post_violation_threshold,
        post_violation_jb_threshold: first.post_violation_jb_threshold,
      }
    : { ...DEFAULT_THRESHOLDS };
  const o = req.overrides ?? {};
  return {
    policy_id: first?.id ?? null,
    policy_ids: policies.map((p) => p.id),
    rules,
    thresholds: {
      pre_violation_threshold: o.pre_violation_threshold ?? base.pre_violation_threshold,
      pre_jb_threshold: o.pre_jb_threshold ?? base.pre_jb_threshold,
      post_violation_threshold: o.post_violation_threshold ?? base.post_violation_threshold,
      post_violation_jb_threshold:
        o.post_violation_jb_threshold ?? base.post_violation_jb_threshold,
    },
    mode: first?.mode ?? 'content_moderation',
    scanners_config: { ...(first?.scanners_config ?? {}), ...(req.scanner_configs ?? {}) },
    block_message: first?.block_message ?? DEFAULT_BLOCK_MESSAGE,
    stream_mode: first?.stream_mode ?? null,
    fail_mode: first?.fail_mode ?? null,
    scoring_timeout_ms: first?.scoring_timeout_ms ?? null,
    policy_revision:
      req.inline.length === 0 && req.scanner_configs === undefined
        ? policies.map((p) => `${p.id}@${p.updated_at}`).join(',')
        : undefined,
  };
}

/** How a scoring is run under the policies in force (scoreSafely). */
export interface ScoringTerms {
  failMode: 'open' | 'closed';
  /** Give up after this long (the engine's own deadline applies too); null: the engine's only. */
  timeoutMs: number | null;
}

/** How scoring runs under the policies in force: their fail mode and timeout, else the server's. */
export function scoringOf(
  policy: EffectivePolicy,
  serverFailMode: 'open' | 'closed',
): ScoringTerms {
  return {
    failMode:
      policy.fail_mode === null
        ? serverFailMode
        : policy.fail_mode === 'fail_open'
          ? 'open'
          : 'closed',
    timeoutMs: policy.scoring_timeout_ms,
  };
}

/** The fields of a score request that come from the policies in force. */
export function policyScoreFields(
  policy: EffectivePolicy,
): Pick<ScoreRequest, 'rules' | 'thresholds' | 'mode' | 'scanners_config' | 'policy_revision'> {
  return {
    rules: policy.rules,
    thresholds: policy.thresholds,
    mode: policy.mode,
    scanners_config: policy.scanners_config,
    ...(policy.policy_revision !== undefined ? { policy_revision: policy.policy_revision } : {}),
  };
}

async function loadPolicy(
  deps: { policies: PolicyStore },
  principal: Principal,
  id: string,
): Promise<Policy> {
  const p = findPreset(id) ?? (await deps.policies.get(principal.org_id, id));
  if (!p) throw notFound(`Policy ${id}`);
  return p;
}
