import { idTime } from '@guard/platform';
import type { Activity, Principal } from '../types.js';
import type { MonitorAnalysis } from './monitor.js';

/**
 * The id of an activity recorded now: made in the millisecond `now()` reads (ids sort by the time
 * in them; export's `since` and `until` are bounds on it), which is its `created_at`.
 */
export function newActivityId(deps: { newId: (atMs?: number) => string; now: () => Date }): string {
  return deps.newId(deps.now().getTime());
}

/** What one call decided, as both monitor and protected completions record it. */
export interface ActivityFacts {
  /** Made by newActivityId: its time is the record's `created_at`. */
  id: string;
  principal: Principal;
  /** `monitor`, `chat.completions`, `responses`, `messages`, `generate_content`. */
  endpoint: string;
  policy_id: string | null;
  policy_ids: string[];
  model: string | null;
  alarm: boolean;
  blocked: boolean;
  pre: MonitorAnalysis | null;
  post: MonitorAnalysis | null;
  /** performance.now() when the call began. */
  startedAt: number;
  input: string | undefined;
  output: string | undefined;
  excerptChars: number;
  metadata: Record<string, unknown>;
}

export function excerpt(text: string | undefined, chars: number): string | null {
  if (!text || chars <= 0) return null;
  return text.length > chars ? `${text.slice(0, chars)}…` : text;
}

/** The activity record of decisions.md ("Activity"), built in one place for every endpoint. */
export function buildActivity(f: ActivityFacts): Activity {
  return {
    id: f.id,
    org_id: f.principal.org_id,
    // The id's own time, not a second reading of the clock: the two could fall in different
    // milliseconds (or the id's be later, if the clock stepped back), and export's time bounds
    // are bounds on ids.
    created_at: idTime(f.id).toISOString(),
    endpoint: f.endpoint,
    policy_id: f.policy_id,
    policy_ids: f.policy_ids,
    model: f.model,
    api_key_id: f.principal.key_id,
    user_id: f.principal.user_id,
    alarm: f.alarm,
    blocked: f.blocked,
    pre_analysis: f.pre ? { ...f.pre } : null,
    post_generation_analysis: f.post ? { ...f.post } : null,
    latency_ms: Math.round((performance.now() - f.startedAt) * 1000) / 1000,
    input_excerpt: excerpt(f.input, f.excerptChars),
    output_excerpt: excerpt(f.output, f.excerptChars),
    metadata: f.metadata,
  };
}
