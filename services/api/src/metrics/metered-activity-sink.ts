import type { Activity, ActivitySink } from '@guard/domain';
import type { DecisionMetric, GuardMetrics } from '@guard/platform/metrics';
import { isRecord } from '../completions/formats/openai-common.js';

interface RuleVerdict {
  name: string;
  mode: string;
  violated: boolean;
}
const isRuleVerdict = (v: unknown): v is RuleVerdict =>
  isRecord(v) &&
  typeof v.name === 'string' &&
  typeof v.mode === 'string' &&
  typeof v.violated === 'boolean';

// What of `scanner_output` names violated rules (the engine's `rules` and `builtin_rules`); a
// list with anything else in it, or an engine that reports none, counts no rule. Read in place
// on every recorded decision: nothing is copied.
function violationsOf(analysis: Record<string, unknown>): DecisionMetric['violations'] {
  const output = analysis.scanner_output;
  if (!isRecord(output)) return [];
  const out: DecisionMetric['violations'] = [];
  for (const list of [output.rules, output.builtin_rules]) {
    if (!Array.isArray(list) || !list.every(isRuleVerdict)) continue;
    for (const r of list) if (r.violated) out.push({ rule: r.name, mode: r.mode });
  }
  return out;
}

/**
 * What one activity counts as. `error` first: a scoring failure is what an operator must see,
 * whether the fail mode then blocked (closed) or passed (open) the call.
 */
export function decisionMetricOf(activity: Activity): DecisionMetric {
  const analyses = [activity.pre_analysis, activity.post_generation_analysis].filter(
    (a): a is Record<string, unknown> => a !== null,
  );
  const failed = analyses.find((a) => a.error === true);
  const observed =
    activity.alarm ||
    analyses.some((a) => a.observe_violation !== null && a.observe_violation !== undefined);
  return {
    endpoint: activity.endpoint,
    policyId: activity.policy_id,
    outcome: failed ? 'error' : activity.blocked ? 'blocked' : observed ? 'observed' : 'passed',
    violations: analyses.flatMap(violationsOf),
    // scoreSafely answers a failure with violation 1 under `closed`, 0 under `open`.
    failMode: failed ? (Number(failed.violation) > 0 ? 'closed' : 'open') : null,
  };
}

/**
 * The activity sink, counting each decision as it is recorded: every endpoint records exactly one
 * activity per decision through this port, so counting here needs nothing of the domain code.
 */
export function meteredActivitySink(sink: ActivitySink, metrics: GuardMetrics): ActivitySink {
  return {
    publish: (activity) => {
      metrics.recordDecision(decisionMetricOf(activity));
      return sink.publish(activity);
    },
    flush: () => sink.flush(),
  };
}
