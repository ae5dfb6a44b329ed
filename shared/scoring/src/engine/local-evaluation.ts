/** What the local detectors, scanners and rules found for one request, before the result is assembled. */
import type { ScoreRequest } from '../engine-types.js';
import type { RulePlan } from '../router/rule-router.js';
import type { RuleEvaluation } from '../router/score-rule.js';
import type { HarmOutput } from '../detectors.js';
import type { HarmTopic } from '../encoder/encoder.js';
import type { MutationEvidence } from '../text/normalize.js';
import type { ConversationParts } from './conversation.js';
import type { SentenceLocation } from './evaluate-local.js';
import type { ModeProfile } from './modes.js';
import type { DetectorResult, OutputContext } from './text-analysis.js';

export const BUILTIN_JAILBREAK_DESCRIPTION =
  'Built-in jailbreak detection on user input (always evaluated).';

export const r3 = (x: number): number => Math.round(x * 1000) / 1000;
/**
 * `r3` on the same side of `limit` as `x`, so that a score printed beside its threshold agrees
 * with the verdict (0.4996 under 0.5 is 0.499, not 0.5).
 */
export const r3Side = (x: number, limit: number): number => {
  const r = r3(x);
  if (x < limit && r >= limit) return Math.floor(x * 1000) / 1000;
  if (x >= limit && r < limit) return Math.ceil(x * 1000) / 1000;
  return r;
};

/** One third-party text's indirect-injection score, and which model gave it. */
export interface IndirectSource {
  origin: string;
  score: number;
  /** The static detector, or the encoder (apply-documents.ts). */
  detector: 'static' | 'encoder';
}

export interface BuiltinRule {
  name: string;
  description: string;
  mode: 'block' | 'observe';
  score: number;
  threshold: number;
  violated: boolean;
  evidence: string[];
}

export interface LocalEvaluation {
  request: ScoreRequest;
  parts: ConversationParts;
  profile: ModeProfile;
  thresholds: { violation: number; jailbreak: number };
  jailbreak: DetectorResult;
  /** Which model gave `jailbreak`: the static detector or the encoder stage. */
  jailbreakFrom: 'static' | 'encoder';
  injection: DetectorResult;
  indirect: { score: number; sources: IndirectSource[] };
  ipiThreshold: number;
  harm: HarmOutput | null;
  /** Which model gave `harm`: the static detector, the encoder stage with it, or the multilingual reader raising it. */
  harmFrom: 'static' | 'encoder' | 'multilingual';
  /** The static detector's overall harm score (`harm.any` when `harmFrom` is static). */
  staticHarm: number;
  /** Input: the multilingual reader's harm of the request, when it read it (0.5 at its point). */
  multilingualHarm?: number;
  /**
   * Input: where the sentence of a long input whose read raised the overall harm lies, and its
   * score, when one did (`locateSentence`).
   */
  harmSentence?: SentenceLocation;
  /** The harm category the request speaks of by meaning (when the encoder read its harm). */
  harmTopic?: HarmTopic;
  /** Output phase: the request's harm and the answer's compliance with it (null on input). */
  outputContext: OutputContext | null;
  /** Output phase: the answer's own harm read by both models and the static score it replaced. */
  answerHarm?: { static: number; score: number };
  mutationEvidence: MutationEvidence[];
  rules: Array<{
    index: number;
    plan: RulePlan;
    evaluation: RuleEvaluation;
    mode: 'block' | 'observe';
  }>;
  builtins: BuiltinRule[];
  scannerOutput: Record<string, unknown>;
  notes: string[];
  decodedForJudge: string[];
  inputTokens: number;
}
