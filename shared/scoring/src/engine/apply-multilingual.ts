/**
 * The harm of a request the English models cannot read: the static detectors' vocabulary and the
 * English encoder's are English WordPiece, so harmful requests in Vietnamese, Chinese, Arabic, ...
 * passed (0-5% caught). A request the gate sends on (multilingual/gate.ts: most letters outside
 * ASCII, or too few English words) is read by the multilingual reader (frozen multilingual-e5-small
 * and a harm head trained on the build's prompts, mostly English); its score, 0.5 at the point 1%
 * of the calibration split's benign prompts in other languages reach, raises the request's overall
 * harm and is what a rule about harm in general reads for it (docs/detection-quality.md, "Other
 * languages").
 */
import { sigmoid } from '../ml/ml-model.js';
import {
  harmLogit,
  type MultilingualManifest,
  type MultilingualReader,
} from '../multilingual/reader.js';
import { harmTarget, modeOf, type EncoderStage } from './apply-encoder.js';
import type { RequestAnalysis } from './evaluate-local.js';

/** How the note of a request the reader failed on begins (calibration steps stop on it). */
export const MULTILINGUAL_UNAVAILABLE = 'multilingual reader unavailable';

export interface MultilingualStage {
  manifest: MultilingualManifest;
  /** Whether the English models cannot read `text` (the gate). */
  sends: (text: string) => boolean;
  /** The reader, loaded on first use; rejects when its weights are not installed. */
  reader: () => Promise<MultilingualReader>;
}

export interface MultilingualVerdict {
  /** The reader's harm of the request, 0.5 at its operating point. */
  score?: number;
  /** Why it did not answer for a request it should have read. */
  note?: string;
}

/**
 * The multilingual reader's harm of an analysed request: none when the encoder stage is off for
 * it, the policy reads no harm, the reader has no harm head, or the gate keeps the text (what the
 * encoder stage reads for harm: the input read whole, or a conversation's latest message).
 */
export async function multilingualHarm(
  an: RequestAnalysis,
  stage: EncoderStage,
  signal?: AbortSignal,
): Promise<MultilingualVerdict> {
  const ml = stage.multilingual;
  if (!ml?.manifest.harm || modeOf(an, stage) === 'off') return {};
  if (!an.policy.readsHarm || an.jailbreakInput.length === 0) return {};
  const target = harmTarget(an);
  const text = target ? (target.latest ?? an.jailbreakInput) : null;
  if (!text || !ml.sends(text)) return {};
  try {
    const reader = await ml.reader();
    const [embedding] = await reader.read([text], signal);
    const z = embedding ? harmLogit(reader.manifest, embedding, text) : null;
    if (z === null) throw new Error('the reader returned nothing');
    return { score: sigmoid(z) };
  } catch (e) {
    if (signal?.aborted) throw e;
    return {
      note: `${MULTILINGUAL_UNAVAILABLE} (${e instanceof Error ? e.message : String(e)}): the English models answered for a request in another language`,
    };
  }
}
