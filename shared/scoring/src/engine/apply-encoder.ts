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
import type { JailbreakStage, RequestAnalysis } from './evaluate-local.js';
import { r3 } from './local-evaluation.js';

export interface EncoderStage {
  /** For policies that do not set `scanners_config.encoder`. */
  defaultMode: EncoderMode;
  manifest: EncoderManifest;
  /** The encoder, loaded on first use. */
  encoder: () => Promise<Encoder>;
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
  // The encoder reads the text and every payload the normaliser decoded from it (base64, URL
  // encoding, ...). When something was decoded the input is disguised, and the encoder only adds:
  // the static detector's verdict on the decoded text stands (measured: a base64 jailbreak reads
  // as harmless to the encoder in its encoded form).
  const disguised = an.jailbreakVariants.length > 0;
  let score: number;
  try {
    const encoder = await stage.encoder();
    const items = [an.jailbreakInput, ...an.jailbreakVariants].map((text) => ({
      role: 'prompt' as const,
      text,
    }));
    const out = await encoder.encode(items, signal);
    if (out.length !== items.length) throw new Error('encoder answered for fewer texts than asked');
    score = Math.max(...out.map((o) => calibratedJailbreak(encoder.manifest, o)));
    if (disguised) score = Math.max(score, staticScore);
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
  ].join('; ');
  return {
    stage: {
      score,
      evidence: `jailbreak encoder ${r3(score)} (static detector ${r3(staticScore)}; ${why})`,
    },
  };
}
