/**
 * Answers read by the encoder: in the output phase an answer is harmful when it goes along with a
 * harmful request (`harmInContext`), and how far it goes along is read by both models, the
 * encoder's comply head on the answer with the static detector's compliance (`comply` in the
 * manifest, calibrate-answers.ts). The static head reads refusal and going-along phrases; the
 * two together rank jailbroken models' answers better than either alone
 * (docs/detection-quality.md, "Answers read by the encoder").
 *
 * Compliance only matters when the request is harmful enough: the context score is
 * min(request harm, compliance), so the cascade reads the answer only when the request's harm
 * (as the encoder stage read it) reaches the policy's violation threshold; `all` reads every
 * answer the static path judged in context.
 */
import { calibratedCompliance, type EncoderItem } from '../encoder/encoder.js';
import type { Detectors } from '../detectors.js';
import { modeOf, type EncoderStage } from './apply-encoder.js';
import type { RequestAnalysis } from './evaluate-local.js';
import { harmInContext } from './text-analysis.js';

/**
 * What the encoder reads of an analysed request's answer for compliance, in `mode`: none on input,
 * without the static path's judgement in context (no compliance detector, nothing checked), for a
 * policy without harm rules (nothing reads the answer's harm), for an answer with a decoded
 * payload (the static score over every view stands), or, in the cascade, when the request's harm
 * is under the violation threshold.
 */
export function answerRead(an: RequestAnalysis, mode: 'cascade' | 'all'): EncoderItem | null {
  const ctx = an.outputContext;
  if (an.parts.phase === 'input' || !ctx || !an.policy.readsHarm) return null;
  if (an.checkedAn.norm.variants.length > 0) return null;
  const text = an.checkedAn.norm.canonical;
  if (!/\S/u.test(text)) return null;
  if (mode === 'cascade' && ctx.request < an.thresholds.violation) return null;
  return { role: 'response', text };
}

/**
 * The answer's compliance read by both models (`calibratedCompliance`), when the manifest has a
 * `comply` point and the request's mode and `answerRead` say so; a failing encoder returns the
 * `note` to add instead (the static compliance stands).
 */
export async function encoderCompliance(
  an: RequestAnalysis,
  stage: EncoderStage,
  signal?: AbortSignal,
): Promise<{ compliance?: number; note?: string }> {
  const mode = modeOf(an, stage);
  const ctx = an.outputContext;
  if (!stage.manifest.comply || mode === 'off' || !ctx) return {};
  const item = answerRead(an, mode);
  if (!item) return {};
  try {
    const [out] = await (await stage.encoder()).encode([item], signal);
    if (!out) throw new Error('encoder answered for fewer texts than asked');
    const compliance = calibratedCompliance(stage.manifest, ctx.compliance, out);
    return compliance === null ? {} : { compliance };
  } catch (e) {
    if (signal?.aborted) throw e;
    return {
      note: `encoder unavailable for the answer (${e instanceof Error ? e.message : String(e)}): its compliance is the static detector's`,
    };
  }
}

/** `an` with its answer judged in context on `compliance` (`encoderCompliance`), when there is one. */
export function withCompliance(
  an: RequestAnalysis,
  detectors: Detectors,
  compliance: number | undefined,
): RequestAnalysis {
  if (compliance === undefined) return an;
  const { harm, context } = harmInContext(
    detectors,
    an.checkedHarm,
    an.requestHarm,
    an.checkedAn,
    compliance,
  );
  return { ...an, harm, outputContext: context };
}
