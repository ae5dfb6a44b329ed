/**
 * The contract between the learned detectors (src/ml/, trained by `npm run train`) and the rest
 * of the scoring core (normalisation, scanners, rule router, engine). Every score is a calibrated
 * probability in [0, 1]; spans point into the text the detector was given.
 */

export const HARM_CATEGORIES = [
  'violence',
  'weapons',
  'self_harm',
  'sexual',
  'sexual_minors',
  'hate',
  'harassment',
  'illegal_drugs',
  'cybercrime',
  'fraud',
  'extremism',
  'privacy',
] as const;
export type HarmCategory = (typeof HARM_CATEGORIES)[number];

export interface Span {
  start: number;
  end: number;
  /** What this span is evidence of, e.g. "persona override", "adversarial suffix", "weapons". */
  label: string;
}

export interface DetectorOutput {
  score: number;
  spans: Span[];
}

/** Where a text sits in a conversation: detectors may weigh evidence differently per role. */
export type TextRole = 'prompt' | 'response' | 'document';

export interface HarmOutput {
  /** Probability that the text is harmful at all. */
  any: DetectorOutput;
  /** Per category: probability that the text is harmful in that category. */
  categories: Record<HarmCategory, DetectorOutput>;
}

export interface Detectors {
  /** Attempts to make the model drop its rules: personas, developer mode, refusal suppression, adversarial suffixes, many-shot. */
  jailbreak(text: string): DetectorOutput;
  /** Instructions aimed at the model. On `document` text (tool results, retrieved content) this is indirect injection. */
  injection(text: string, role: TextRole): DetectorOutput;
  /** Harmful content, overall and per category. */
  harm(text: string, role: TextRole): HarmOutput;
  /**
   * Whether a model response goes along with the request it answers: high for an answer that
   * delivers what a harmful request asked for, low for a refusal or a deflection. Only meaningful
   * after a harmful request (the engine combines it with the request's harm score); detectors
   * without it judge responses on their own text only.
   */
  compliance?(response: string): DetectorOutput;
}
