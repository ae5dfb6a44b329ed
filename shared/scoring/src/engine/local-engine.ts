/**
 * The scoring engine: normalisation, detectors, scanners and the rule router put together with
 * the semantics of spec/decisions.md, plus the judge for `hybrid` / `thinking`.
 *
 * `score` runs the encoder stage when one is given (apply-encoder.ts: the jailbreak cascade, and
 * custom rules by meaning); `scoreSync` is the static-only path (no encoder, no judge, no
 * promise) for benchmarks and tools.
 */
import type { Detectors } from '../detectors.js';
import type { ScoreEngine, ScoreRequest, ScoreResult } from '../engine-types.js';
import {
  createJudgeClient,
  type Judge,
  type JudgeConfig,
  type JudgeOutcome,
} from '../judge/judge-client.js';
import {
  encoderRuleMeaning,
  encoderStage,
  type EncoderStage,
  type EncoderVerdicts,
} from './apply-encoder.js';
import { encoderCacheScope } from '../encoder/cached-encoder.js';
import { encoderAnswer, withAnswer } from './apply-answer.js';
import { encoderDocuments, withDocuments } from './apply-documents.js';
import { multilingualHarm } from './apply-multilingual.js';
import { applyJudge, renderTranscript, selectForJudge } from './apply-judge.js';
import { errorScoreResult } from './error-result.js';
import {
  analyseRequest,
  decide,
  withRequestHarm,
  evaluateLocal,
  type LocalEvaluationDeps,
  type RequestAnalysis,
} from './evaluate-local.js';
import { finalizeResult } from './finalize-result.js';
import type { LocalEvaluation } from './local-evaluation.js';
import { createPolicyCompiler } from './compiled-policy.js';
import { warmTokenizer } from './token-counter.js';

export { BUILTIN_JAILBREAK_DESCRIPTION } from './local-evaluation.js';

export interface HybridBand {
  /** A local score at or above `threshold - below` ... */
  below: number;
  /** ... and below `threshold + above` is uncertain and goes to the judge. */
  above: number;
}

export interface LocalEngineOptions {
  detectors: Detectors;
  /** A judge endpoint, or any Judge implementation. Without one, hybrid/thinking answer locally. */
  judge?: JudgeConfig | Judge;
  /** Default {below: 0.25, above: 0.2}. */
  hybridBand?: HybridBand;
  /** The jailbreak encoder stage (createDefaultEngine builds it from models/encoder). */
  encoder?: EncoderStage;
  /** Load the tokenizer now rather than on the first request (default true). */
  warmup?: boolean;
}

export interface LocalEngine extends ScoreEngine {
  /** Static detectors only, synchronously: no encoder stage, no judge (hybrid/thinking requests get local scores). */
  scoreSync(request: ScoreRequest): ScoreResult;
}

const DEFAULT_BAND: HybridBand = { below: 0.25, above: 0.2 };

export function createLocalEngine(options: LocalEngineOptions): LocalEngine {
  const detectors = options.detectors;
  const judge: Judge | undefined =
    options.judge === undefined
      ? undefined
      : 'evaluate' in options.judge
        ? options.judge
        : createJudgeClient(options.judge);
  const band = options.hybridBand ?? DEFAULT_BAND;
  if (options.warmup ?? true) warmTokenizer();

  const generalHarmAt = options.encoder?.manifest.harm_general?.at;
  const deps: LocalEvaluationDeps = {
    detectors,
    compile: createPolicyCompiler(),
    // Calibrated with the encoder stage's manifest; it holds for the static path too.
    ...(generalHarmAt !== undefined ? { generalHarmAt } : {}),
  };

  function scoreSync(request: ScoreRequest): ScoreResult {
    try {
      const ev = evaluateLocal(request, deps);
      if (request.reasoning_mode !== 'off')
        ev.notes.push(
          `reasoning_mode ${request.reasoning_mode} requested on the synchronous path: local detectors only`,
        );
      return finalizeResult(ev, null);
    } catch (e) {
      return errorScoreResult(request, e);
    }
  }

  async function score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
    signal?.throwIfAborted();
    let ev: LocalEvaluation;
    try {
      if (options.encoder) {
        // Analysed once; the encoder's score, when it gives one, goes into the decision.
        const an = analyseRequest(request, deps);
        const [enc, ml, docs] = await Promise.all([
          encoderStage(an, options.encoder, signal),
          multilingualHarm(an, options.encoder, signal),
          encoderDocuments(an, options.encoder, signal),
        ]);
        // On input, what the encoder stage read is the checked text: reused, not read again.
        const read = an.parts.phase === 'input' ? enc.read : undefined;
        const judged = withDocuments(judgedHarm(an, enc, ml.score), docs);
        // On output, the answer is read (its compliance, its own harm) once the request's harm is
        // known.
        const [meaning, answer] = await Promise.all([
          encoderRuleMeaning(an, options.encoder, signal, read),
          encoderAnswer(judged, options.encoder, signal),
        ]);
        ev = decide(withAnswer(judged, detectors, answer), enc.jailbreak, meaning.scores);
        for (const note of [enc.note, ml.note, docs.note, answer.note, meaning.note])
          if (note) ev.notes.push(note);
      } else ev = evaluateLocal(request, deps);
    } catch (e) {
      if (signal?.aborted) throw e;
      return errorScoreResult(request, e);
    }
    if (request.reasoning_mode === 'off') return finalizeResult(ev, null);
    if (!judge) {
      return finalizeResult(ev, {
        applied: new Map(),
        outputTokens: 0,
        summary: { consulted: false, reason: 'no judge model configured' },
        lines: [
          `reasoning_mode ${request.reasoning_mode}: no judge model is configured, so the local detectors answered.`,
        ],
      });
    }
    const candidates = selectForJudge(ev, request.reasoning_mode, band);
    if (candidates.length === 0) {
      return finalizeResult(ev, {
        applied: new Map(),
        outputTokens: 0,
        summary: { consulted: false, reason: 'all local scores confident' },
        lines: [
          'reasoning_mode hybrid: every local score was clearly above or below its threshold, so the judge was not consulted.',
        ],
      });
    }
    let outcome: JudgeOutcome;
    try {
      outcome = await judge.evaluate(
        {
          phase: ev.parts.phase,
          transcript: renderTranscript(request),
          decoded: ev.decodedForJudge,
          rules: candidates,
          withReasoning: request.reasoning_mode === 'thinking',
        },
        signal,
      );
    } catch (e) {
      if (signal?.aborted) throw e;
      outcome = {
        ok: false,
        error: e instanceof Error ? e.message : String(e),
        outputTokens: 0,
        latencyMs: 0,
      };
    }
    return finalizeResult(ev, applyJudge(ev, candidates, outcome, request.reasoning_mode));
  }

  /**
   * `an` with the request's harm as the encoder stage and the multilingual reader read it. The
   * reader's score raises the overall one (it reads what the English models cannot), and the
   * category the English encoder found by meaning is dropped for such a request.
   */
  function judgedHarm(an: RequestAnalysis, enc: EncoderVerdicts, ml?: number): RequestAnalysis {
    const base = enc.harm ?? (ml !== undefined ? an.requestHarm : null);
    if (!base) return an;
    if (ml === undefined)
      return withRequestHarm(an, base, detectors, {
        ...(enc.harmTopic ? { topic: enc.harmTopic } : {}),
        ...(enc.harmSentence ? { sentence: enc.harmSentence } : {}),
      });
    // (The reader reads the input whole or a conversation's latest message: then no sentences are.)
    const raised = { ...base, any: { ...base.any, score: Math.max(base.any.score, ml) } };
    return withRequestHarm(an, raised, detectors, { multilingual: ml });
  }

  return {
    // What the encoder remembers of this request's texts stays in its scope (cached-encoder.ts).
    score: (request, signal) =>
      encoderCacheScope.run(request.cache_scope ?? '', () => score(request, signal)),
    scoreSync,
  };
}
