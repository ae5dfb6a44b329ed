/**
 * The jailbreak cascade: the static detector answers the inputs it is sure are harmless; the
 * rest (or every input, in mode `all`) are read by the contextual encoder, whose calibrated score
 * replaces the static one. Measured on sources neither model was trained on, the encoder catches
 * far more scenario, fiction and human-written jailbreaks (docs/detection-quality.md).
 */
import {
  calibratedJailbreak,
  type Encoder,
  type EncoderManifest,
  type EncoderMode,
} from '../encoder/encoder.js';
import { ENCODER_MAX_CHARS } from '../encoder/encoder-input.js';
import { MAX_SEGMENT_CHARS, segmentText } from '../ml/features.js';
import type { JailbreakStage, RequestAnalysis } from './evaluate-local.js';
import { r3 } from './local-evaluation.js';

/**
 * Segments of a long input that the encoder reads on their own, at most. Past that it reads only
 * the segments the static detector flagged, and past that too the static verdict stands (the
 * encoder only adds), so the cost of a request stays bounded.
 */
export const MAX_SEGMENT_READS = 8;

/**
 * What the encoder reads of an analysed request: the input (cut to its opening and end) and every
 * payload the normaliser decoded; for an input longer than one segment, also each segment of the
 * static detector that the opening and end do not hold (so that an attack in the middle of a long
 * prompt is read), or, when those are more than MAX_SEGMENT_READS, the ones the static detector
 * flagged. `complete` is false when even those are too many.
 */
export function encoderReads(
  an: RequestAnalysis,
  stage: Pick<EncoderStage, 'manifest' | 'countTokens'>,
): { texts: string[]; complete: boolean } {
  const texts = [an.jailbreakInput, ...an.jailbreakVariants];
  const sj = an.staticJailbreak;
  if (an.jailbreakInput.length <= MAX_SEGMENT_CHARS || sj.variant !== 'text')
    return { texts, complete: true };
  const canonical = an.userAn.norm.canonical;
  const { headEnd, tailStart } = stage.countTokens
    ? readInContext(canonical, stage.manifest, stage.countTokens)
    : { headEnd: 0, tailStart: canonical.length };
  const unread = (segs: ReadonlyArray<{ start: number; end: number }>): string[] =>
    segs
      .filter((s) => s.end > headEnd && s.start < tailStart)
      .map((s) => canonical.slice(s.start, s.end))
      .filter((t) => /\S/u.test(t));
  let segments = unread(segmentText(canonical));
  if (segments.length > MAX_SEGMENT_READS) segments = unread(sj.spans);
  if (segments.length > MAX_SEGMENT_READS) return { texts, complete: false };
  return { texts: [...texts, ...segments], complete: true };
}

export interface EncoderStage {
  /** For policies that do not set `scanners_config.encoder`. */
  defaultMode: EncoderMode;
  manifest: EncoderManifest;
  /** The encoder, loaded on first use. */
  encoder: () => Promise<Encoder>;
  /**
   * WordPiece tokens of a text (the encoder's vocabulary): tells which segments of a long input
   * its opening and end already hold. Absent, every segment is taken as unread.
   */
  countTokens?: (text: string) => number;
}

/** Tokens of "prompt: " and a margin for normalisation, which can change a text's length a little. */
const PREFIX_TOKENS = 2;
const MARGIN_TOKENS = 8;

/**
 * The span of a long input that the encoder's cut (its first `head_tokens` and last `tail_tokens`)
 * reads in context, in whole segments of the static detector and with a margin: [0, headEnd) and
 * [tailStart, length). Tokenises only the segments near the two ends.
 */
function readInContext(
  text: string,
  manifest: EncoderManifest,
  countTokens: (text: string) => number,
): { headEnd: number; tailStart: number } {
  const segs = segmentText(text);
  let budget = manifest.head_tokens - PREFIX_TOKENS - MARGIN_TOKENS;
  let i = 0;
  for (; i < segs.length; i++) {
    const seg = segs[i] as { start: number; end: number };
    const n = countTokens(text.slice(seg.start, seg.end));
    if (n > budget) break;
    budget -= n;
  }
  const headEnd = i > 0 ? (segs[i - 1] as { end: number }).end : 0;
  // The encoder cuts a text to its first ENCODER_MAX_CHARS characters before taking the end: past that,
  // the end it reads is not the text's end.
  if (text.length > ENCODER_MAX_CHARS) return { headEnd, tailStart: text.length };
  budget = manifest.tail_tokens - MARGIN_TOKENS;
  let j = segs.length - 1;
  for (; j >= i; j--) {
    const seg = segs[j] as { start: number; end: number };
    const n = countTokens(text.slice(seg.start, seg.end));
    if (n > budget) break;
    budget -= n;
  }
  const tailStart = j < segs.length - 1 ? (segs[j + 1] as { start: number }).start : text.length;
  return { headEnd, tailStart };
}

/**
 * The encoder's jailbreak verdict on an analysed request, or undefined when the static one stands
 * (mode off, no user input, a cascade input below the routing point, or a failing encoder, which
 * returns the note to add instead).
 */
export async function encoderJailbreak(
  an: RequestAnalysis,
  stage: EncoderStage,
  signal?: AbortSignal,
): Promise<{ stage?: JailbreakStage; note?: string }> {
  const mode = an.encoderMode ?? stage.defaultMode;
  const staticScore = an.staticJailbreak.score;
  if (mode === 'off' || an.jailbreakInput.length === 0) return {};
  if (mode === 'cascade' && staticScore < stage.manifest.route_above) return {};
  // When something was decoded (base64, URL encoding, ...) the input is disguised, and the encoder
  // only adds: the static detector's verdict on the decoded text stands (measured: a base64
  // jailbreak reads as harmless to the encoder in its encoded form). Likewise when the static
  // detector flagged more segments of a long input than the encoder reads on their own.
  const disguised = an.jailbreakVariants.length > 0;
  const reads = encoderReads(an, stage);
  let score: number;
  try {
    const encoder = await stage.encoder();
    const items = reads.texts.map((text) => ({ role: 'prompt' as const, text }));
    const out = await encoder.encode(items, signal);
    if (out.length !== items.length) throw new Error('encoder answered for fewer texts than asked');
    score = Math.max(...out.map((o) => calibratedJailbreak(encoder.manifest, o)));
    if (disguised || !reads.complete) score = Math.max(score, staticScore);
  } catch (e) {
    if (signal?.aborted) throw e;
    return {
      note: `jailbreak encoder unavailable (${e instanceof Error ? e.message : String(e)}): the static detector answered`,
    };
  }
  const why = [
    mode === 'all'
      ? 'encoder mode all'
      : `cascade: static score at or above ${stage.manifest.route_above.toPrecision(2)}`,
    ...(disguised
      ? [`with ${an.jailbreakVariants.length} decoded payload(s), the higher score kept`]
      : []),
    ...(reads.complete
      ? []
      : [`more than ${MAX_SEGMENT_READS} flagged segments, the higher score kept`]),
    ...(reads.texts.length > 1 + an.jailbreakVariants.length
      ? [`${reads.texts.length - 1 - an.jailbreakVariants.length} segment(s) read alone`]
      : []),
  ].join('; ');
  return {
    stage: {
      score,
      evidence: `jailbreak encoder ${r3(score)} (static detector ${r3(staticScore)}; ${why})`,
    },
  };
}
