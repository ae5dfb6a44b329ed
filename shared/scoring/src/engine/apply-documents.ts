/**
 * Indirect prompt injection read by the encoder: the third-party texts of a request (tool and
 * function results, tool-call arguments) are read in windows by the contextual encoder, whose
 * injection head, calibrated on the calibration split's documents (`indirect` in the manifest),
 * replaces the static detector's score. The static document head reads imperative words; on the
 * validation split's held-out BIPIA attack types it caught 36.7% of injected documents and flagged
 * 19.5% of e-mails with instructions for their human reader, the default cascade 78.3% and 2.9%; on
 * a source neither model trained on, the encoder catches about what the static head does
 * (docs/detection-quality.md, "Documents read by the encoder"). Tool definitions stay with the
 * static detector: instructions to the model are what they are for.
 */
import { calibratedIndirect, type EncoderOutput } from '../encoder/encoder.js';
import { MAX_WINDOWS, modeOf, textWindows, type EncoderStage } from './apply-encoder.js';
import type { RequestAnalysis } from './evaluate-local.js';
import { r3, type IndirectSource } from './local-evaluation.js';

/**
 * Windows the encoder reads of a request's third-party texts, at most (about 16 KB of English, a
 * third of a second on one core): the texts past it, latest first, keep the static detector's
 * score.
 */
export const MAX_DOCUMENT_WINDOWS = 40;

/**
 * Characters of a document read at its opening and its end: one too long for MAX_WINDOWS windows
 * when the manifest has no `indirect_long` point, or too long for what is left of the request's
 * windows.
 */
const LONG_HEAD_CHARS = 3200;
const LONG_TAIL_CHARS = 600;

/** What the encoder reads of one third-party text (`documentReads`). */
export interface DocumentRead {
  /** Index in `RequestAnalysis.indirectSources`. */
  index: number;
  texts: string[];
  /**
   * False when the encoder did not read all of it (a long text, read at its opening and end) or
   * the normaliser decoded a payload in it: the static score then stands when it is higher.
   */
  complete: boolean;
  /** Read whole in more than MAX_WINDOWS windows: scored at the `indirect_long` point. */
  long: boolean;
}

/**
 * The third-party texts of an analysed request the encoder reads, latest first, and how: a text
 * in windows (apply-encoder.ts `textWindows`), one too long for MAX_WINDOWS windows by windows of
 * its opening and end; then, when the manifest has an `indirect_long` point, each such text
 * (latest first) in every window it needs if the request's windows left hold them, so that a long
 * text never takes the windows of the shorter ones beside it. In the cascade, only texts whose
 * static score reaches `indirect.route_above`. `skipped`: texts routed but past
 * MAX_DOCUMENT_WINDOWS; `cut`: long texts left at their opening and end for want of windows.
 */
export function documentReads(
  an: RequestAnalysis,
  stage: Pick<EncoderStage, 'manifest' | 'countTokens'>,
  mode: 'cascade' | 'all',
): { reads: DocumentRead[]; skipped: number; cut: number } {
  const point = stage.manifest.indirect;
  // `opened`: read by its opening and end; `every`: then all its windows, when at most `cap`.
  const reads: Array<DocumentRead & { decoded: boolean; opened: boolean; every: string[] | null }> =
    [];
  let windows = 0;
  let skipped = 0;
  let cut = 0;
  if (!point) return { reads, skipped, cut };
  // Cut once: with a point for long documents as far as a whole request's windows.
  const cap = stage.manifest.indirect_long ? MAX_DOCUMENT_WINDOWS : MAX_WINDOWS;
  for (let index = an.thirdPartyTexts.length - 1; index >= 0; index--) {
    const tp = an.thirdPartyTexts[index];
    const source = an.indirectSources[index];
    if (!tp || !source || tp.kind !== 'content' || !/\S/u.test(tp.text)) continue;
    if (mode === 'cascade' && source.score < point.route_above) continue;
    // Once the budget is spent the rest are not even cut into windows.
    if (windows >= MAX_DOCUMENT_WINDOWS) {
      skipped++;
      continue;
    }
    const windowed = textWindows(tp.text, stage, cap);
    const whole = windowed !== null && windowed.length <= MAX_WINDOWS ? windowed : null;
    // A part too dense for MAX_WINDOWS windows itself is read as it is (by its opening and end).
    const part = (t: string) => textWindows(t, stage) ?? [t];
    const texts = whole ?? [
      ...part(tp.text.slice(0, LONG_HEAD_CHARS)),
      ...part(tp.text.slice(-LONG_TAIL_CHARS)),
    ];
    if (windows + texts.length > MAX_DOCUMENT_WINDOWS) {
      skipped++;
      continue;
    }
    windows += texts.length;
    reads.push({
      index,
      texts,
      complete: whole !== null && !tp.decoded,
      long: false,
      decoded: tp.decoded,
      opened: whole === null,
      every: whole === null ? windowed : null,
    });
  }
  if (stage.manifest.indirect_long)
    for (const r of reads) {
      if (!r.opened) continue;
      // Its opening and end, or every window it needs if what is left holds them.
      if (r.every === null || windows + r.every.length - r.texts.length > MAX_DOCUMENT_WINDOWS) {
        cut++;
        continue;
      }
      windows += r.every.length - r.texts.length;
      r.texts = r.every;
      r.long = true;
      r.complete = !r.decoded;
    }
  return {
    reads: reads.map(({ index, texts, complete, long }) => ({ index, texts, complete, long })),
    skipped,
    cut,
  };
}

/** What the encoder changes of a request's indirect-injection verdict (`encoderDocuments`). */
export interface DocumentVerdicts {
  /** `RequestAnalysis.indirectSources` with the encoder's scores for the texts it read. */
  sources?: IndirectSource[];
  /**
   * Texts left to the static detector (past the budget), long texts left at their opening and end
   * (too few windows left), or a failing encoder.
   */
  note?: string;
}

/**
 * The encoder's indirect-injection scores for an analysed request's third-party texts: none when
 * the encoder is off for it, the manifest has no `indirect` point or nothing is routed.
 */
export async function encoderDocuments(
  an: RequestAnalysis,
  stage: EncoderStage,
  signal?: AbortSignal,
): Promise<DocumentVerdicts> {
  const mode = modeOf(an, stage);
  if (mode === 'off' || an.thirdPartyTexts.length === 0) return {};
  const { reads, skipped, cut } = documentReads(an, stage, mode);
  const notes = [
    ...(skipped > 0
      ? [
          `${skipped} third-party text(s) past the encoder's ${MAX_DOCUMENT_WINDOWS} windows per request: the static detector answered for them`,
        ]
      : []),
    ...(cut > 0
      ? [
          `${cut} long third-party text(s) read by their opening and end, more windows than the request had left (${MAX_DOCUMENT_WINDOWS} in all): the static score kept when higher`,
        ]
      : []),
  ];
  const budgetNote = notes.length > 0 ? notes.join('; ') : undefined;
  if (reads.length === 0) return budgetNote ? { note: budgetNote } : {};
  let out: EncoderOutput[];
  try {
    const encoder = await stage.encoder();
    const items = reads.flatMap((r) =>
      r.texts.map((text) => ({ role: 'document' as const, text })),
    );
    out = await encoder.encode(items, signal);
    if (out.length !== items.length) throw new Error('encoder answered for fewer texts than asked');
  } catch (e) {
    if (signal?.aborted) throw e;
    return {
      note: `encoder unavailable (${e instanceof Error ? e.message : String(e)}): the static detector answered for third-party content`,
    };
  }
  const sources = [...an.indirectSources];
  let at = 0;
  for (const r of reads) {
    const score = calibratedIndirect(stage.manifest, out.slice(at, at + r.texts.length), r.long);
    at += r.texts.length;
    const own = sources[r.index];
    if (score === null || !own) continue;
    const kept = !r.complete && own.score > score;
    sources[r.index] = kept ? own : { origin: own.origin, score: r3(score), detector: 'encoder' };
  }
  return { sources, ...(budgetNote ? { note: budgetNote } : {}) };
}

/** `an` with the encoder's indirect-injection scores (`encoderDocuments`), when it gave any. */
export function withDocuments(an: RequestAnalysis, verdicts: DocumentVerdicts): RequestAnalysis {
  if (!verdicts.sources) return an;
  return {
    ...an,
    indirectSources: verdicts.sources,
    indirectScore: Math.max(0, ...verdicts.sources.map((s) => s.score)),
  };
}
