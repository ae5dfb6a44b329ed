import { isAppError } from '@guard/platform';
import {
  errorScoreResult,
  type ReasoningMode,
  type ScoreClient,
  type ScoreMessage,
  type ScoreRequest,
  type ScoreResult,
} from '../scoring/score-contract.js';
import type { ActivitySink, OrgStore, PolicyStore } from '../ports.js';
import type { Activity, Principal } from '../types.js';
import {
  toInlineRules,
  toScoreMessages,
  toToolDefs,
  type IgnoredInput,
  type InlineRulesInput,
  type RawMessage,
} from './monitor-input.js';
import {
  policyScoreFields,
  resolvePolicies,
  scoringOf,
  type EffectivePolicy,
  type ScoringTerms,
} from './resolve-policies.js';
import { buildActivity, newActivityId } from './activity-record.js';

export interface MonitorDeps {
  policies: PolicyStore;
  orgs: OrgStore;
  engine: ScoreClient;
  activity: ActivitySink;
  /**
   * A new id; given `atMs`, one made in that millisecond (as `newId` of @guard/platform does), so
   * that an activity's `created_at` and the time in its id agree and export's time bounds, which
   * are id bounds, never return a record outside them.
   */
  newId: (atMs?: number) => string;
  now: () => Date;
  /** What a failed scoring reports as `violation`: `closed` 1.0 (never a clean pass), `open` 0.0. */
  failMode: 'open' | 'closed';
  /** Characters of input and output kept in the activity record (0 keeps none). */
  excerptChars: number;
}

export interface MonitorInput {
  text?: string | undefined;
  messages?: RawMessage[] | undefined;
  categories?: InlineRulesInput | undefined;
  rules?: InlineRulesInput | undefined;
  reasoning_mode?: ReasoningMode | undefined;
  policy_id?: string | undefined;
  policy_ids?: string[] | undefined;
  tools?:
    | {
        type?: string;
        function: { name: string; description?: string | undefined; parameters?: unknown };
      }[]
    | undefined;
  metadata?: Record<string, unknown> | undefined;
  scanner_configs?: Record<string, unknown> | undefined;
  /** Alias of `scanner_configs` (the spelling policies use). */
  scanners_config?: Record<string, unknown> | undefined;
}

/** The analysis part of a monitor response; also what activity records keep. */
export type MonitorAnalysis = Omit<ScoreResult, 'alarm' | 'phase'>;

export interface MonitorResponse extends MonitorAnalysis {
  activity_id: string;
  /** The policy whose thresholds, mode and scanners applied (null: inline rules only). */
  policy_id: string | null;
  policy_ids: string[];
  block_message: string;
  ignored_inputs: IgnoredInput[];
}

export interface MonitorOutcome {
  response: MonitorResponse;
  result: ScoreResult;
  policy: EffectivePolicy;
  activity: Activity;
}

export function isBypass(metadata: Record<string, unknown> | undefined): boolean {
  const v = metadata?.guard_bypass;
  return v === 'true' || v === true;
}

export function analysisOf(r: ScoreResult): MonitorAnalysis {
  const { alarm: _alarm, phase: _phase, ...analysis } = r;
  return analysis;
}

/**
 * Score with the engine; a failure or a scoring past `timeoutMs` becomes an `error: true` result
 * under the fail mode.
 */
export async function scoreSafely(
  engine: ScoreClient,
  request: ScoreRequest,
  { failMode, timeoutMs }: ScoringTerms,
): Promise<ScoreResult> {
  const signal = timeoutMs === null ? undefined : AbortSignal.timeout(timeoutMs);
  try {
    const result = await engine.score(request, signal);
    // The engine reports its own failures as error results: the fail mode decides what they count as.
    if (result.error)
      return {
        ...result,
        violation: failMode === 'closed' ? 1 : 0,
        alarm: result.alarm || failMode === 'closed',
      };
    return result;
  } catch (err) {
    // No scorer could take the request at all (queue full, Redis away): not a verdict the fail
    // mode can stand in for, but a 503 the caller retries.
    if (isAppError(err) && err.code === 'SCORER_UNAVAILABLE') throw err;
    const failed = errorScoreResult(
      request,
      signal?.aborted
        ? new Error(`scoring took longer than the policy's scoring_timeout_ms (${timeoutMs} ms)`)
        : err,
    );
    return {
      ...failed,
      violation: failMode === 'closed' ? 1 : 0,
      alarm: failMode === 'closed',
      error_message: `${failed.error_message ?? ''} (fail mode ${failMode})`,
    };
  }
}

/** POST /guard/monitor: score text or a conversation, answer, and record one activity. */
export async function monitor(
  deps: MonitorDeps,
  principal: Principal,
  input: MonitorInput,
): Promise<MonitorOutcome> {
  const started = performance.now();
  let messages: ScoreMessage[];
  let ignored: IgnoredInput[] = [];
  if (input.text !== undefined) messages = [{ role: 'user', content: input.text }];
  else ({ messages, ignored } = toScoreMessages(input.messages ?? []));

  const policy = await resolvePolicies(deps, principal, {
    policy_id: input.policy_id,
    policy_ids: input.policy_ids,
    inline: [...toInlineRules(input.categories), ...toInlineRules(input.rules)],
    scanner_configs: input.scanner_configs ?? input.scanners_config,
  });
  const tools = toToolDefs(input.tools);
  const request: ScoreRequest = {
    messages,
    ...policyScoreFields(policy),
    reasoning_mode: input.reasoning_mode ?? 'off',
    ...(tools ? { tools } : {}),
    cache_scope: principal.org_id,
  };
  const result = await scoreSafely(deps.engine, request, scoringOf(policy, deps.failMode));
  const analysis = analysisOf(result);
  const bypass = isBypass(input.metadata);
  // The id and time are taken when the decision is recorded: export pages by id below a watermark
  // of settled time, so the time between an id and its write must stay short.
  const activityId = newActivityId(deps);
  const response: MonitorResponse = {
    ...analysis,
    ...(bypass
      ? {
          violation: 0,
          observe_violation: null,
          violated_rules: [],
          violated_rule_descriptions: [],
        }
      : {}),
    activity_id: activityId,
    policy_id: policy.policy_id,
    policy_ids: policy.policy_ids,
    block_message: policy.block_message,
    ignored_inputs: ignored,
  };

  const lastUser = [...messages]
    .reverse()
    .find((m) => m.role === 'user' || m.role === 'developer' || m.role === 'system');
  const lastAssistant = result.phase === 'output' ? messages.at(-1) : undefined;
  const activity = buildActivity({
    id: activityId,
    principal,
    endpoint: 'monitor',
    policy_id: policy.policy_id,
    policy_ids: policy.policy_ids,
    model: null,
    alarm: result.alarm,
    blocked: !bypass && result.violation > 0,
    pre: result.phase === 'input' ? analysis : null,
    post: result.phase === 'output' ? analysis : null,
    startedAt: started,
    input: lastUser?.content,
    output: lastAssistant?.content,
    excerptChars: deps.excerptChars,
    metadata: { ...(input.metadata ?? {}), ...(bypass ? { bypassed: true } : {}) },
  });
  await deps.activity.publish(activity);
  return { response, result, policy, activity };
}
