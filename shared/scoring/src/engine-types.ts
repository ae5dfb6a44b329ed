/**
 * The scoring core's request and result are the domain's scoring port (ScoreRequest, ScoreResult,
 * defined once with zod in @guard/domain); this file only names them for the engine, and adds
 * the per-rule detail the engine reports inside `scanner_output.rules`.
 */
import type { EngineRuleMode, ScoreClient } from '@guard/domain';

export type {
  EngineRuleMode,
  MessageRole,
  ReasoningMode,
  ScoreMessage,
  ScoreRequest,
  ScoreResult,
  ScoreRule,
  ScoreThresholds,
  ScoreToolCall,
  ScoreToolDef,
  ViolatedRuleDescription,
} from '@guard/domain';

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

/** An implementation of the domain's scoring port: the local engine, the thread pool, a remote scorer. */
export type ScoreEngine = ScoreClient;
