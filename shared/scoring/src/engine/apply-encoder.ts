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
import { MAX_SEGMENT_CHARS, segmentText } from '../ml/features.js';
import type { JailbreakStage, RequestAnalysis } from './evaluate-local.js';
import { r3 } from './local-evaluation.js';

/**
 * Windows of a long input the encoder reads, at most (about 1,000 tokens, some 4 KB of English).
 * A longer input is read by its opening and end and the segments the static detector flagged;
 * past MAX_WINDOWS of those, the static score stands (the encoder only adds), so the cost of a
 * request stays bounded.
 */
export const MAX_WINDOWS = 8;

/** Tokens of "prompt: " in front of every text the encoder reads. */
const PREFIX_TOKENS = 2;

/**
 * What the encoder reads of an analysed request, besides every payload the normaliser decoded:
 * an input that fits its window (`head_tokens + tail_tokens`) as it is; a longer one in windows
 * that each fit, made of whole segments of the static detector (at most 400 characters, split at
 * lines and sentences), so that no part of it goes unread and ordinary text around an attack
 * cannot hide it; one too long for MAX_WINDOWS windows by its opening and end and each segment the
 * static detector flagged. `complete` is false when those are more than MAX_WINDOWS too.
 */
export function encoderReads(
  an: RequestAnalysis,
  stage: Pick<EncoderStage, 'manifest' | 'countTokens'>,
): { texts: string[]; complete: boolean; windows: number } {
  const variants = an.jailbreakVariants;
  const whole = { texts: [an.jailbreakInput, ...variants], complete: true, windows: 1 };
  const sj = an.staticJailbreak;
  if (an.jailbreakInput.length <= MAX_SEGMENT_CHARS || sj.variant !== 'text') return whole;
  const canonical = an.userAn.norm.canonical;
  const windows = packWindows(
    canonical,
    stage.manifest.head_tokens + stage.manifest.tail_tokens - PREFIX_TOKENS,
    stage.countTokens,
  );
  if (windows) return { texts: [...windows, ...variants], complete: true, windows: windows.length };
  const flagged = sj.spans.map((s) => canonical.slice(s.start, s.end)).filter((t) => /\S/u.test(t));
  if (flagged.length > MAX_WINDOWS) return { ...whole, complete: false };
  return { ...whole, texts: [...whole.texts, ...flagged] };
}

/**
 * Consecutive segments of `text` packed into windows of at most `budget` tokens (a segment over
 * the budget is a window of its own, which the encoder cuts to its opening and end), or null when
 * more than MAX_WINDOWS windows would be needed. Tokenises at most about MAX_WINDOWS windows' worth.
 */
function packWindows(
  text: string,
  budget: number,
  countTokens: (text: string) => number,
): string[] | null {
  const out: string[] = [];
  let start = -1;
  let end = -1;
  let used = 0;
  for (const seg of segmentText(text)) {
    const n = countTokens(text.slice(seg.start, seg.end));
    if (start >= 0 && used + n <= budget) {
      end = seg.end;
      used += n;
      continue;
    }
    if (start >= 0) {
      out.push(text.slice(start, end));
      if (out.length >= MAX_WINDOWS) return null;
    }
    start = seg.start;
    end = seg.end;
    used = n;
  }
  if (start >= 0) out.push(text.slice(start, end));
  return out.filter((t) => /\S/u.test(t));
}

export interface EncoderStage {
  /** For policies that do not set `scanners_config.encoder`. */
  defaultMode: EncoderMode;
  manifest: EncoderManifest;
  /** The encoder, loaded on first use. */
  encoder: () => Promise<Encoder>;
  /** WordPiece tokens of a text in the encoder's vocabulary: how a long input is cut into windows. */
  countTokens: (text: string) => number;
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
  // detector flagged more segments of a very long input than the encoder reads.
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
    ...(reads.complete ? [] : [`more than ${MAX_WINDOWS} flagged segments, the higher score kept`]),
    ...(reads.windows > 1 ? [`read in ${reads.windows} windows`] : []),
    ...(reads.complete && reads.texts.length > reads.windows + an.jailbreakVariants.length
      ? [
          `opening and end, and ${reads.texts.length - 1 - an.jailbreakVariants.length} flagged segment(s)`,
        ]
      : []),
  ].join('; ');
  return {
    stage: {
      score,
      evidence: `jailbreak encoder ${r3(score)} (static detector ${r3(staticScore)}; ${why})`,
    },
  };
}
