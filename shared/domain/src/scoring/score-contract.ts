import { z } from 'zod';

/**
 * The scoring port: what the request path hands to the scoring core and what comes back. The
 * core runs in-process (worker threads) in embedded mode and in scorer pods behind Redis in
 * distributed mode, so request and result are plain JSON, described here once with zod (the
 * Redis envelope validates against these) and versioned: a change that an older scorer could
 * not read bumps SCORE_CONTRACT_VERSION.
 */
export const SCORE_CONTRACT_VERSION = 1;

export const MESSAGE_ROLES = [
  'system',
  'developer',
  'user',
  'assistant',
  'tool',
  'function',
] as const;
export const MessageRole = z.enum(MESSAGE_ROLES).meta({ id: 'MessageRole' });
export type MessageRole = z.infer<typeof MessageRole>;

export const REASONING_MODES = ['off', 'hybrid', 'thinking'] as const;
export const ReasoningMode = z.enum(REASONING_MODES).meta({ id: 'ReasoningMode' });
export type ReasoningMode = z.infer<typeof ReasoningMode>;

/** What a policy's `mode` tunes in the scoring core (see the scoring README); others are a 422. */
export const POLICY_MODES = [
  'content_moderation',
  'prompt_injection',
  'pii_protection',
  'coding_agent',
] as const;
export const PolicyMode = z.enum(POLICY_MODES).meta({ id: 'PolicyMode' });
export type PolicyMode = z.infer<typeof PolicyMode>;

/** How a rule is enforced: `block` counts towards `violation`, `observe` is only recorded. */
export const RULE_MODES = ['block', 'observe', 'disabled'] as const;
export const RuleMode = z.enum(RULE_MODES).meta({ id: 'RuleMode' });
export type RuleMode = z.infer<typeof RuleMode>;
/** The engine's name for a rule mode (same values). */
export type EngineRuleMode = RuleMode;

export const ScoreToolCall = z.object({
  id: z.string().optional(),
  name: z.string(),
  /** JSON text, as the model produced it. */
  arguments: z.string(),
});
export type ScoreToolCall = z.infer<typeof ScoreToolCall>;

export const ScoreMessage = z.object({
  role: MessageRole,
  /** Text of the message; non-text parts have already been removed by the caller. */
  content: z.string(),
  name: z.string().optional(),
  tool_calls: z.array(ScoreToolCall).optional(),
  tool_call_id: z.string().optional(),
});
export type ScoreMessage = z.infer<typeof ScoreMessage>;

export const ScoreRule = z.object({ name: z.string(), description: z.string(), mode: RuleMode });
export type ScoreRule = z.infer<typeof ScoreRule>;

const Threshold = z.number().min(0).max(1);
export const ScoreThresholds = z.object({
  pre_violation_threshold: Threshold,
  pre_jb_threshold: Threshold,
  post_violation_threshold: Threshold,
  post_violation_jb_threshold: Threshold,
});
export type ScoreThresholds = z.infer<typeof ScoreThresholds>;

export const ScoreToolDef = z.object({
  name: z.string(),
  description: z.string().optional(),
  parameters: z.unknown().optional(),
});
export type ScoreToolDef = z.infer<typeof ScoreToolDef>;

export const ScorePhase = z.enum(['input', 'output']);

export const ScoreRequest = z.object({
  /** The conversation. A bare `text` is sent as one user message. */
  messages: z.array(ScoreMessage),
  /** Merged rules in policy order; `violated_rules` indices are 1-based positions in this list. */
  rules: z.array(ScoreRule),
  thresholds: ScoreThresholds,
  mode: z.string(),
  /** The policy's scanner settings as stored; the engine parses them leniently. */
  scanners_config: z.record(z.string(), z.unknown()),
  /**
   * Names the stored policies `rules` and `scanners_config` came from, as `id@updated_at` joined
   * by commas; absent when the request adds its own rules or scanner settings. The same value
   * always comes with the same rules and settings, so the engine keeps what it compiled from them
   * under this name (a policy's `updated_at` changes with every write).
   */
  policy_revision: z.string().max(2000).optional(),
  reasoning_mode: ReasoningMode,
  tools: z.array(ScoreToolDef).optional(),
  /**
   * Which side is checked: `input` uses the pre thresholds, `output` the post thresholds.
   * When absent: `output` if the last message is from the assistant, else `input`.
   */
  phase: ScorePhase.optional(),
  /**
   * Who may share what the engine remembers of this request's texts (the encoder's cache): a
   * request of another scope never finds them, so the time a call takes tells nothing of what
   * other callers sent. The API sends the caller's organization; absent, requests share one scope.
   */
  cache_scope: z.string().max(200).optional(),
});
export type ScoreRequest = z.infer<typeof ScoreRequest>;

export const ViolatedRuleDescription = z.object({
  rule: z.number().int(),
  name: z.string(),
  description: z.string(),
});
export type ViolatedRuleDescription = z.infer<typeof ViolatedRuleDescription>;

export const ScoreResult = z.object({
  violation: z.number(),
  observe_violation: z.number().nullable(),
  violated_rules: z.array(z.number().int()),
  violated_rule_descriptions: z.array(ViolatedRuleDescription),
  ipi: z.boolean(),
  mutation: z.boolean(),
  /** Per scanner/detector output, e.g. { jailbreak: {score, spans}, pii: {...}, rules: [...] }. */
  scanner_output: z.record(z.string(), z.unknown()),
  reasoning: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  error: z.boolean(),
  error_message: z.string().nullable(),
  /** True when the jailbreak signal crossed its threshold, or a block rule was violated, or ipi/mutation. */
  alarm: z.boolean(),
  phase: ScorePhase,
});
export type ScoreResult = z.infer<typeof ScoreResult>;

/**
 * The port. Every call carries a deadline: the implementation gives up when `signal` aborts or
 * its own timeout passes, and the caller answers with the policy's fail mode.
 */
export interface ScoreClient {
  score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult>;
}

/** The phase a request is checked in: explicit, else output when the assistant spoke last. */
export function phaseOf(request: ScoreRequest): 'input' | 'output' {
  return request.phase ?? (request.messages.at(-1)?.role === 'assistant' ? 'output' : 'input');
}

/** The result of a scoring that did not complete: no signal, `error: true`; never a clean pass. */
export function errorScoreResult(request: ScoreRequest, error: unknown): ScoreResult {
  const message = error instanceof Error ? error.message : String(error);
  return {
    violation: 0,
    observe_violation: null,
    violated_rules: [],
    violated_rule_descriptions: [],
    ipi: false,
    mutation: false,
    scanner_output: {},
    reasoning: `Scoring did not complete: ${message}. This is not a clean pass.`,
    input_tokens: 0,
    output_tokens: 0,
    error: true,
    error_message: message,
    alarm: false,
    phase: phaseOf(request),
  };
}
