/**
 * The scoring engine's request and result: what the monitor endpoint (and, in distributed mode,
 * the scorer pods) hand to the core, and what comes back. Plain JSON-serialisable data so it can
 * cross a Redis stream unchanged.
 */

export type ReasoningMode = 'off' | 'hybrid' | 'thinking';
export type EngineRuleMode = 'block' | 'observe' | 'disabled';
export type MessageRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

export interface ScoreToolCall {
  id?: string;
  name: string;
  /** JSON text, as the model produced it. */
  arguments: string;
}

export interface ScoreMessage {
  role: MessageRole;
  /** Text of the message; non-text parts have already been removed by the caller. */
  content: string;
  name?: string;
  tool_calls?: ScoreToolCall[];
  tool_call_id?: string;
}

export interface ScoreRule {
  name: string;
  description: string;
  mode: EngineRuleMode;
}

export interface ScoreThresholds {
  pre_violation_threshold: number;
  pre_jb_threshold: number;
  post_violation_threshold: number;
  post_violation_jb_threshold: number;
}

export interface ScoreToolDef {
  name: string;
  description?: string;
  parameters?: unknown;
}

export interface ScoreRequest {
  /** The conversation. A bare `text` is sent as one user message. */
  messages: ScoreMessage[];
  /** Merged rules in policy order; `violated_rules` indices are 1-based positions in this list. */
  rules: ScoreRule[];
  thresholds: ScoreThresholds;
  mode: string;
  scanners_config: Record<string, unknown>;
  reasoning_mode: ReasoningMode;
  tools?: ScoreToolDef[];
  /**
   * Which side is checked: `input` uses the pre thresholds, `output` the post thresholds.
   * When absent: `output` if the last message is from the assistant, else `input`.
   */
  phase?: 'input' | 'output';
}

export interface ViolatedRuleDescription {
  rule: number;
  name: string;
  description: string;
}

export interface RuleScore {
  /** 1-based position in ScoreRequest.rules. */
  rule: number;
  name: string;
  mode: EngineRuleMode;
  score: number;
  threshold: number;
  violated: boolean;
  /** `high` when a detector or scanner is mapped to the rule; `low` for lexical relevance only. */
  confidence: 'high' | 'low';
  source: string;
  evidence: string[];
}

export interface ScoreResult {
  violation: number;
  observe_violation: number | null;
  violated_rules: number[];
  violated_rule_descriptions: ViolatedRuleDescription[];
  ipi: boolean;
  mutation: boolean;
  /** Per scanner/detector output, e.g. { jailbreak: {score, spans}, pii: {...}, rules: RuleScore[] }. */
  scanner_output: Record<string, unknown>;
  reasoning: string;
  input_tokens: number;
  output_tokens: number;
  error: boolean;
  error_message: string | null;
  /** True when the jailbreak signal crossed its threshold, or a block rule was violated, or ipi/mutation. */
  alarm: boolean;
  phase: 'input' | 'output';
}

/** The scoring core as the API sees it: in-process in embedded mode, over Redis in distributed mode. */
export interface ScoreEngine {
  score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult>;
}
