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
