/** A conversation's text normalised, its decoded variants, and the detectors run over all of them. */
import {
  HARM_CATEGORIES,
  type DetectorOutput,
  type Detectors,
  type HarmOutput,
  type TextRole,
} from '../detectors.js';
import { TextView } from '../scanners/keyword-matcher.js';
import { normalizeText, type NormalizedText } from '../text/normalize.js';
import type { CheckedMessage } from './conversation.js';

export interface Analysis {
  messages: CheckedMessage[];
  joined: string;
  norm: NormalizedText;
  views: TextView[];
  variantKinds: string[];
}

export interface DetectorResult extends DetectorOutput {
  /** Which text the spans point into: "text" (normalised) or a decoded variant kind. */
  variant: string;
}

const ZERO: DetectorOutput = { score: 0, spans: [] };
const clamp01 = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

export function runDetector(
  an: Analysis,
  fn: (text: string) => DetectorOutput,
  reveal: (variant: string, score: number) => void,
): DetectorResult {
  if (an.joined.length === 0) return { ...ZERO, variant: 'text' };
  const base = fn(an.norm.canonical);
  let best: DetectorResult = { score: clamp01(base.score), spans: base.spans, variant: 'text' };
  const baseScore = best.score;
  an.norm.variants.forEach((v, k) => {
    const out = fn(v.text);
    const s = clamp01(out.score);
    if (s >= 0.5 && s > baseScore + 0.2) reveal(an.variantKinds[k] ?? v.kind, s);
    if (s > best.score) best = { score: s, spans: out.spans, variant: v.kind };
  });
  return best;
}

export function runHarm(
  detectors: Detectors,
  an: Analysis,
  role: TextRole,
  reveal: (variant: string, score: number) => void,
): HarmOutput | null {
  if (an.joined.length === 0) return null;
  const texts = [an.norm.canonical, ...an.norm.variants.map((v) => v.text)];
  let merged: HarmOutput | null = null;
  texts.forEach((t, k) => {
    const h = detectors.harm(t, role);
    if (
      k > 0 &&
      merged &&
      clamp01(h.any.score) >= 0.5 &&
      clamp01(h.any.score) > merged.any.score + 0.2
    ) {
      reveal(an.norm.variants[k - 1]?.kind ?? 'variant', h.any.score);
    }
    if (!merged) {
      merged = {
        any: { score: clamp01(h.any.score), spans: h.any.spans },
        categories: { ...h.categories },
      };
      for (const c of HARM_CATEGORIES)
        merged.categories[c] = {
          score: clamp01(h.categories[c].score),
          spans: h.categories[c].spans,
        };
      return;
    }
    const m: HarmOutput = merged;
    if (h.any.score > m.any.score) m.any = { score: clamp01(h.any.score), spans: h.any.spans };
    for (const c of HARM_CATEGORIES)
      if (h.categories[c].score > m.categories[c].score)
        m.categories[c] = { score: clamp01(h.categories[c].score), spans: h.categories[c].spans };
  });
  return merged;
}

export function analyse(messages: CheckedMessage[], vocabulary: ReadonlySet<string>): Analysis {
  const joined = messages.map((m) => m.text).join('\n\n');
  const norm = normalizeText(joined, { vocabulary });
  const views = [new TextView(norm.canonical), ...norm.variants.map((v) => new TextView(v.text))];
  return { messages, joined, norm, views, variantKinds: norm.variants.map((v) => v.kind) };
}

/** How the output phase judged an answer against the request it answers. */
export interface OutputContext {
  /** Harm of the user's request (prompt calibration). */
  request: number;
  /** How far the answer goes along with it (`Detectors.compliance`). */
  compliance: number;
  /** min(request, compliance): harmful because it complies with a harmful request. */
  score: number;
  /**
   * Who read the compliance: the static detector, or both models (the encoder's comply head
   * with the static one, apply-answer.ts).
   */
  reader: 'static' | 'both';
}

/**
 * The output phase scores an answer as an answer: it is harmful when its own text is, or when it
 * goes along with a harmful request ("Sure, here is how ..."), per category too. A refusal or a
 * deflection of a harmful request, and any answer to a harmless one, gain nothing from context.
 */
export function harmInContext(
  detectors: Detectors,
  answer: HarmOutput | null,
  request: HarmOutput | null,
  output: Analysis,
  readByBoth?: number,
): { harm: HarmOutput | null; context: OutputContext | null } {
  const comply = detectors.compliance?.bind(detectors);
  if (!answer || !request || !comply) return { harm: answer, context: null };
  const read = runDetector(output, comply, () => undefined);
  // `readByBoth`: the compliance the encoder read with the static detector replaces its score;
  // the static detector's spans (refusal and going-along phrases) stay the evidence.
  const compliance = readByBoth === undefined ? read : { ...read, score: readByBoth };
  const context: OutputContext = {
    request: request.any.score,
    compliance: compliance.score,
    score: Math.min(request.any.score, compliance.score),
    reader: readByBoth === undefined ? 'static' : 'both',
  };
  if (context.score <= answer.any.score) return { harm: answer, context };
  const harm: HarmOutput = {
    any: { score: context.score, spans: compliance.spans },
    categories: { ...answer.categories },
  };
  // The category heads are weak (few labelled rows) and the answer may not name its subject, so
  // the request's overall harm goes to its categories by their shares: the most likely category
  // of the request carries the whole context score, a category half as likely half of it.
  const top = Math.max(...HARM_CATEGORIES.map((c) => request.categories[c].score));
  for (const c of HARM_CATEGORIES) {
    const share = top > 0 ? request.categories[c].score / top : 0;
    const s = Math.min(request.any.score * share, compliance.score);
    if (s > harm.categories[c].score) harm.categories[c] = { score: s, spans: compliance.spans };
  }
  return { harm, context };
}
