import { newId } from '@guard/platform';
import type { Activity } from '@guard/domain';

/**
 * An activity as the monitor records it, complete enough to pass the `ActivityRecord` schema of
 * the Kafka topic and the export (unlike `anActivity`, whose analysis is a stub). `n` varies the
 * content so that a stream of them is not one repeated document.
 */
export function aRecordedActivity(orgId: string, n = 0, over: Partial<Activity> = {}): Activity {
  const created = over.created_at ? Date.parse(over.created_at) : Date.now();
  const alarm = n % 7 === 0;
  return {
    id: newId(created),
    org_id: orgId,
    created_at: new Date(created).toISOString(),
    endpoint: n % 3 === 0 ? 'chat.completions' : 'monitor',
    policy_id: 'policy-basic',
    policy_ids: ['policy-basic'],
    model: n % 3 === 0 ? 'gpt-4o-mini' : null,
    api_key_id: `key-${n % 5}`,
    user_id: `user-${n % 11}`,
    alarm,
    blocked: alarm,
    pre_analysis: {
      violation: alarm ? 0.93 : 0.02,
      observe_violation: null,
      violated_rules: alarm ? [2] : [],
      violated_rule_descriptions: alarm
        ? [{ rule: 2, name: 'no_violence', description: 'No violent content' }]
        : [],
      ipi: false,
      mutation: n % 13 === 0,
      scanner_output: {},
      reasoning: '',
      input_tokens: 40 + (n % 50),
      output_tokens: 0,
      error: false,
      error_message: null,
    },
    post_generation_analysis: null,
    latency_ms: 1 + (n % 20) / 10,
    input_excerpt: `Which trains go from Lyon to Turin on Saturday morning? (request ${n})`,
    output_excerpt: null,
    metadata: { request_id: `req-${n}` },
    ...over,
  };
}
