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
import { evaluateLocal, type LocalEvaluationDeps } from './evaluate-local.js';
import { r3, type LocalEvaluation } from './local-evaluation.js';

export interface EncoderStage {
  /** For policies that do not set `scanners_config.encoder`. */
  defaultMode: EncoderMode;
  manifest: EncoderManifest;
  /** The encoder, loaded on first use. */
  encoder: () => Promise<Encoder>;
}

export async function applyEncoder(
  ev: LocalEvaluation,
  deps: LocalEvaluationDeps,
  stage: EncoderStage,
  signal?: AbortSignal,
): Promise<LocalEvaluation> {
  const mode = ev.encoderMode ?? stage.defaultMode;
  const staticScore = ev.jailbreak.score;
  if (mode === 'off' || ev.jailbreakInput.length === 0) return ev;
  if (mode === 'cascade' && staticScore < stage.manifest.route_above) return ev;
  // The encoder reads the text and every payload the normaliser decoded from it (base64, URL
  // encoding, ...). When something was decoded the input is disguised, and the encoder only adds:
  // the static detector's verdict on the decoded text stands (measured: a base64 jailbreak reads
  // as harmless to the encoder in its encoded form).
  const disguised = ev.jailbreakVariants.length > 0;
  let score: number;
  try {
    const encoder = await stage.encoder();
    const items = [ev.jailbreakInput, ...ev.jailbreakVariants].map((text) => ({
      role: 'prompt' as const,
      text,
    }));
    const out = await encoder.encode(items, signal);
    if (out.length !== items.length) throw new Error('encoder answered for fewer texts than asked');
    score = Math.max(...out.map((o) => calibratedJailbreak(encoder.manifest, o)));
    if (disguised) score = Math.max(score, staticScore);
  } catch (e) {
    if (signal?.aborted) throw e;
    ev.notes.push(
      `jailbreak encoder unavailable (${e instanceof Error ? e.message : String(e)}): the static detector answered`,
    );
    return ev;
  }
  const why = [
    mode === 'all'
      ? 'encoder mode all'
      : `cascade: static score at or above ${stage.manifest.route_above.toPrecision(2)}`,
    ...(disguised
      ? [`with ${ev.jailbreakVariants.length} decoded payload(s), the higher score kept`]
      : []),
  ].join('; ');
  return evaluateLocal(ev.request, {
    ...deps,
    jailbreakStage: {
      score,
      evidence: `jailbreak encoder ${r3(score)} (static detector ${r3(staticScore)}; ${why})`,
    },
  });
}
