/**
 * Answers read as the engine's output phase reads them, for calibrate-answers.ts,
 * calibrate-answer-harm.ts and `npm run eval:answers`: each after a neutral user turn, normalised,
 * under the preset's harm rules, through `analyseRequest` and apply-answer.ts `answerRead` (for
 * compliance) or `readableAnswer` (for the answer's own harm), mode all, so that what the point is
 * set on and what is reported are what is served.
 */
import { answerRead, readableAnswer } from '../../shared/scoring/src/engine/apply-answer.js';
import { createPolicyCompiler } from '../../shared/scoring/src/engine/compiled-policy.js';
import { analyseRequest } from '../../shared/scoring/src/engine/evaluate-local.js';
import type {
  Encoder,
  EncoderItem,
  EncoderOutput,
} from '../../shared/scoring/src/encoder/encoder.js';
import type { Detectors } from '../../shared/scoring/src/detectors.js';
import { answerMessages, presetScoreFields } from '../../shared/testing/src/score-request.js';
import { calibRows } from './calib-prompts.js';

/** The static detector's compliance (or own harm) and the encoder's output for one answer. */
export interface AnswerRead {
  staticScore: number;
  out: EncoderOutput | undefined;
}

/** What the engine reads of one answer: the encoder's item and the static detector's score. */
export interface AnswerItem {
  item: EncoderItem;
  staticScore: number;
}

/**
 * The engine's analysis of answers with `detectors`, for their compliance or (`what` harm) their
 * own harm: null for an answer the engine would not read (a decoded payload in it keeps the static
 * score).
 */
export async function answerAnalyser(
  detectors: Detectors,
  what: 'compliance' | 'harm' = 'compliance',
): Promise<(text: string) => AnswerItem | null> {
  const deps = { detectors, compile: createPolicyCompiler() };
  // The preset's harm rules: the output phase reads an answer's compliance for policies with some.
  const preset = await presetScoreFields('Basic Content Safety');
  return (text) => {
    const an = analyseRequest(
      { messages: answerMessages(text), ...preset, reasoning_mode: 'off' },
      deps,
    );
    const item = what === 'harm' ? readableAnswer(an) : answerRead(an, 'all');
    const staticScore = what === 'harm' ? an.checkedHarm?.any.score : an.outputContext?.compliance;
    return item && staticScore !== undefined ? { item, staticScore } : null;
  };
}

/** A reader of answers with `detectors` and `encoder`: answerAnalyser's item, encoded. */
export async function answerReader(
  detectors: Detectors,
  encoder: Encoder,
  what: 'compliance' | 'harm' = 'compliance',
): Promise<(text: string) => Promise<AnswerRead | null>> {
  const analyse = await answerAnalyser(detectors, what);
  return async (text) => {
    const got = analyse(text);
    if (!got) return null;
    const [out] = await encoder.encode([got.item]);
    return { staticScore: got.staticScore, out };
  };
}

/** An answer of the calibration split with its target (1 or 0). */
export interface CalibAnswer {
  source: string;
  y: number;
  text: string;
}

/** The calibration split's answers that have a target for `target` (an index of `TARGET_INDEX`). */
export async function calibAnswers(textsFile: string, target: number): Promise<CalibAnswer[]> {
  return (await calibRows(textsFile, 'response', target)).map((r) => ({
    source: r.source,
    y: r.targets[target] === 1 ? 1 : 0,
    text: r.text,
  }));
}

/**
 * Each answer read with `read`: the answers the engine reads and what was read of them (an answer
 * it would not read, a decoded payload in it, keeps the static score and is counted as skipped).
 */
export async function readAnswers(
  answers: readonly CalibAnswer[],
  read: (text: string) => Promise<AnswerRead | null>,
): Promise<{
  rows: CalibAnswer[];
  reads: Array<{ staticScore: number; out: EncoderOutput }>;
  skipped: number;
}> {
  const rows: CalibAnswer[] = [];
  const reads: Array<{ staticScore: number; out: EncoderOutput }> = [];
  let skipped = 0;
  for (const r of answers) {
    const got = await read(r.text);
    if (!got?.out) {
      skipped++;
      continue;
    }
    rows.push(r);
    reads.push({ staticScore: got.staticScore, out: got.out });
  }
  return { rows, reads, skipped };
}
