/**
 * Answers read by the encoder, in the output phase, two ways from one read (the answer as a
 * response: its first 96 and last 30 tokens):
 *
 * - **In context**: an answer is harmful when it goes along with a harmful request
 *   (`harmInContext`), and how far it goes along is read by both models, the encoder's comply head
 *   on the answer with the static detector's compliance (`comply` in the manifest,
 *   calibrate-answers.ts). The static head reads refusal and going-along phrases; the two together
 *   rank jailbroken models' answers better than either alone (docs/detection-quality.md, "Answers
 *   read by the encoder"). Compliance only matters when the request is harmful enough: the context
 *   score is min(request harm, compliance), so the cascade reads it only when the request's harm
 *   (as the encoder stage read it) reaches the policy's violation threshold.
 * - **On its own**: the answer's own harm, the static detector's overall score blended with the
 *   encoder's harm head on the answer (`answer_harm`, calibrate-answer-harm.ts), whatever the
 *   request; the cascade reads it only when the static score reaches the point's `route_above`
 *   (docs/detection-quality.md, "An answer's own harm read by both models").
 *
 * `all` reads every answer for both.
 */
import {
  calibratedAnswerHarm,
  calibratedCompliance,
  type EncoderItem,
  type EncoderManifest,
} from '../encoder/encoder.js';
import type { Detectors } from '../detectors.js';
import { fitsOneRead, modeOf, withOverall, type EncoderStage } from './apply-encoder.js';
import type { RequestAnalysis } from './evaluate-local.js';
import { harmInContext } from './text-analysis.js';

/**
 * The answer of an analysed request as the encoder reads it: none on input, for a policy without
 * harm rules (nothing reads the answer's harm), for an answer with a decoded payload (the static
 * scores over every view stand) or an empty one.
 */
export function readableAnswer(an: RequestAnalysis): EncoderItem | null {
  if (an.parts.phase === 'input' || !an.policy.readsHarm) return null;
  if (an.checkedAn.norm.variants.length > 0) return null;
  const text = an.checkedAn.norm.canonical;
  return /\S/u.test(text) ? { role: 'response', text } : null;
}

/**
 * What the encoder reads of an analysed request's answer for compliance, in `mode`: the answer
 * (`readableAnswer`) when the static path judged it in context (a compliance detector, a request)
 * and, in the cascade, the request's harm reaches the violation threshold.
 */
export function answerRead(an: RequestAnalysis, mode: 'cascade' | 'all'): EncoderItem | null {
  const ctx = an.outputContext;
  if (!ctx || (mode === 'cascade' && ctx.request < an.thresholds.violation)) return null;
  return readableAnswer(an);
}

/**
 * What the encoder reads of an analysed request's answer for its own harm, in `mode`, at `point`
 * (`answer_harm`): the answer (`readableAnswer`) when the static detector scored its harm and, in
 * the cascade, that score reaches `point.route_above`.
 */
export function answerHarmRead(
  an: RequestAnalysis,
  point: EncoderManifest['answer_harm'],
  mode: 'cascade' | 'all',
): EncoderItem | null {
  const own = an.checkedHarm;
  if (!point || !own || (mode === 'cascade' && own.any.score < point.route_above)) return null;
  return readableAnswer(an);
}

/** What the encoder read of an answer: its compliance and its own harm, each when it was read. */
export interface AnswerVerdicts {
  compliance?: number;
  harm?: number;
  /**
   * The answer is longer than one read (its opening and end): its own harm read by both can only
   * raise the static score, which read all of it.
   */
  partial?: boolean;
  note?: string;
}

/**
 * The answer's compliance (`calibratedCompliance`) and its own harm (`calibratedAnswerHarm`) read
 * by both models, each when the manifest has its point and `answerRead` / `answerHarmRead` say so
 * in the request's mode, from one read; a failing encoder returns the `note` to add instead (the
 * static scores stand).
 */
export async function encoderAnswer(
  an: RequestAnalysis,
  stage: EncoderStage,
  signal?: AbortSignal,
): Promise<AnswerVerdicts> {
  const mode = modeOf(an, stage);
  if (mode === 'off' || an.parts.phase === 'input') return {};
  const { manifest } = stage;
  const comply = manifest.comply && an.outputContext ? answerRead(an, mode) : null;
  const own = answerHarmRead(an, manifest.answer_harm, mode);
  const item = comply ?? own;
  if (!item) return {};
  try {
    const [out] = await (await stage.encoder()).encode([item], signal);
    if (!out) throw new Error('encoder answered for fewer texts than asked');
    const compliance =
      comply && an.outputContext
        ? calibratedCompliance(manifest, an.outputContext.compliance, out)
        : null;
    const harm =
      own && an.checkedHarm ? calibratedAnswerHarm(manifest, an.checkedHarm.any.score, out) : null;
    return {
      ...(compliance !== null ? { compliance } : {}),
      ...(harm !== null
        ? { harm, ...(fitsOneRead(item.text, stage) ? {} : { partial: true }) }
        : {}),
    };
  } catch (e) {
    if (signal?.aborted) throw e;
    const what = [...(comply ? ['compliance'] : []), ...(own ? ['own harm'] : [])].join(' and ');
    return {
      note: `encoder unavailable for the answer (${e instanceof Error ? e.message : String(e)}): its ${what} ${comply && own ? 'are' : 'is'} the static detector's`,
    };
  }
}

/**
 * `an` with what the encoder read of its answer (`encoderAnswer`): its own harm replaced by the
 * score read by both models (no category above it; only raised for an answer longer than one
 * read), then judged in context on the compliance read by both, when there are such.
 */
export function withAnswer(
  an: RequestAnalysis,
  detectors: Detectors,
  read: Pick<AnswerVerdicts, 'compliance' | 'harm' | 'partial'>,
): RequestAnalysis {
  if (read.compliance === undefined && read.harm === undefined) return an;
  const before = an.checkedHarm;
  // As a request's harm read by both: the overall score replaced, no category above it; for an
  // answer longer than one read, only raised (the static score read what the encoder did not).
  const own =
    read.harm === undefined || !before
      ? before
      : withOverall(before, read.harm, read.partial === true);
  const { harm, context } = harmInContext(
    detectors,
    own,
    an.requestHarm,
    an.checkedAn,
    read.compliance,
  );
  return {
    ...an,
    checkedHarm: own,
    harm,
    outputContext: context,
    ...(read.harm !== undefined && before && own
      ? { answerHarm: { static: before.any.score, score: own.any.score } }
      : {}),
  };
}
