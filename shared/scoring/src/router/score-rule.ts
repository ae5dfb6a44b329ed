/**
 * Scores one compiled rule against the evidence of one request. Every source the plan maps to
 * contributes a score; the rule's score is the highest, and the evidence lists every source that
 * said something (scores > 0.05).
 */
import type { DetectorOutput, HarmCategory, HarmOutput } from '../detectors.js';
import type { HarmTopic } from '../encoder/encoder.js';
import type { LeakageResult } from '../scanners/leakage-scanner.js';
import type { PiiFinding } from '../scanners/pii-scanner.js';
import type { PiiType } from '../scanners/scanners-config.js';
import type { SecretFinding } from '../scanners/secrets-scanner.js';
import type { TextView } from '../scanners/keyword-matcher.js';
import type { RegexBudget } from '../scanners/safe-regex.js';
import { STOPWORDS } from '../text/word-lists.js';
import { stem } from '../text/words.js';
import type { RulePlan } from './rule-router.js';

export interface RuleContext {
  phase: 'input' | 'output';
  /** The checked side: canonical texts and decoded variants. */
  views: readonly TextView[];
  /** Harm on the checked side (max over views); null when nothing was checked. */
  harm: HarmOutput | null;
  /** On user-side input, whatever the phase. */
  jailbreak: DetectorOutput;
  injection: DetectorOutput;
  /** On third-party content (tool results, tool-call arguments, tool definitions). */
  indirect: DetectorOutput;
  /** Whether the user-side input talks about prompts/instructions (for leakage rules on input). */
  asksForInstructions: boolean;
  pii(types: readonly PiiType[]): PiiFinding[];
  secrets(): SecretFinding[];
  /** null when no system prompt is known. */
  leakage(): LeakageResult | null;
  destructive(): string[];
  /**
   * The overall harm score at which a rule about harm in general is violated at the default
   * threshold (`generalHarmScore`); absent: 0.5, the overall score as it is.
   */
  generalHarmAt?: number;
  /**
   * The multilingual reader's harm of a request the English models cannot read (0.5 at its
   * operating point; apply-multilingual.ts): a rule about harm in general also takes it.
   */
  multilingualHarm?: number;
  /** Content stems of the checked side. */
  contentStems(): readonly string[];
  /** Harm categories whose vocabulary occurs on the checked side (see harm-cues.ts). */
  harmCues(): ReadonlySet<HarmCategory>;
  /**
   * The harm category the request speaks of by meaning (the encoder's embedding near the
   * category's description), when the encoder read the request's harm.
   */
  harmTopic?: HarmTopic;
  /** Content stems of the system prompt (topic of "stay on topic" rules without a subject). */
  systemPromptStems(): ReadonlySet<string>;
  /** Steps left for the request's regexes (rule regexes and the regex scanner share it). */
  regexBudget?: RegexBudget;
  /**
   * A rule's score by meaning (the encoder's embeddings of the checked text and the rule), for the
   * rules `scoredByMeaning`; undefined when the encoder did not read them (mode off, no encoder).
   */
  meaning?(plan: RulePlan): number | undefined;
}

export interface RuleEvaluation {
  score: number;
  source: string;
  evidence: string[];
  confidence: 'high' | 'low';
  /** Exact matches (phrases, regexes, scanner findings) that a judge must not talk down. */
  deterministic: number;
}

const r2 = (x: number): number => Math.round(x * 1000) / 1000;

export function scoreRule(plan: RulePlan, ctx: RuleContext): RuleEvaluation {
  let score = 0;
  let source = 'none';
  let deterministic = 0;
  const evidence: string[] = [];
  const consider = (s: number, src: string, why: string, exact = false): void => {
    if (s > 0.05) evidence.push(`${why} (${r2(s)})`);
    if (exact) deterministic = Math.max(deterministic, s);
    if (s > score) {
      score = s;
      source = src;
    }
  };

  if (plan.harm.length > 0 && ctx.harm) {
    const harm = ctx.harm;
    const cues = ctx.harmCues();
    for (const c of plan.harm) {
      consider(harm.categories[c].score, `harm:${c}`, `harm detector, category ${c}`);
      // The overall head is the strong one: lend its score to a category the text speaks of.
      // (Lending it by the category heads' shares when the text names no category was measured
      // too: +5.5 points of harmful recall for +1.9 points of benign over-blocking; not shipped.)
      // Or, when the text speaks of no category by its words, to the category the request
      // speaks of by meaning (apply-encoder.ts).
      if (cues.has(c))
        consider(
          harm.any.score,
          `harm:${c}`,
          `harm detector overall, with ${c} vocabulary in the text`,
        );
      else if (ctx.harmTopic?.category === c && cues.size === 0)
        consider(
          harm.any.score,
          `harm:${c}`,
          `harm detector overall, the request near ${c} by meaning (cosine ${r2(ctx.harmTopic.cosine)})`,
        );
    }
  }
  if (plan.harmGeneral && ctx.harm) {
    const at = ctx.generalHarmAt ?? 0.5;
    consider(
      generalHarmScore(ctx.harm.any.score, at),
      'harm:general',
      `harm detector overall ${r2(ctx.harm.any.score)}, a rule about harm in general (0.5 at ${r2(at)})`,
    );
    if (ctx.multilingualHarm !== undefined)
      consider(
        ctx.multilingualHarm,
        'harm:general',
        'multilingual reader on a request in another language, a rule about harm in general',
      );
  }
  if (plan.jailbreak)
    consider(ctx.jailbreak.score, 'jailbreak', 'jailbreak detector on user input');
  if (plan.injection)
    consider(ctx.injection.score, 'injection', 'prompt-injection detector on user input');
  if (plan.indirectInjection)
    consider(
      ctx.indirect.score,
      'indirect_injection',
      'injection detector on tool results / documents',
    );
  if (plan.leakage) {
    if (ctx.phase === 'output') {
      const leak = ctx.leakage();
      if (leak)
        consider(
          leak.score,
          'system_prompt_leakage',
          `output reproduces ${Math.round(leak.coverage * 100)}% of the system prompt`,
          true,
        );
      else evidence.push('system-prompt leakage not checked: no system prompt known');
    } else {
      const s = ctx.asksForInstructions ? ctx.injection.score : ctx.injection.score * 0.5;
      consider(
        s,
        'system_prompt_leakage',
        'prompt-extraction attempt (injection detector) on user input',
      );
    }
  }
  if (plan.pii) {
    const found = ctx.pii(plan.pii);
    if (found.length > 0) {
      const types = [...new Set(found.map((f) => f.type))].join(', ');
      consider(
        maxConfidence(found),
        'pii',
        `PII scanner: ${found.length} finding(s): ${types}`,
        true,
      );
    }
  }
  if (plan.secrets) {
    const found = ctx.secrets();
    if (found.length > 0) {
      const kinds = [...new Set(found.map((f) => f.subtype))].join(', ');
      consider(
        maxConfidence(found),
        'secrets',
        `secrets scanner: ${found.length} finding(s): ${kinds}`,
        true,
      );
    }
  }
  if (plan.destructive) {
    const labels = ctx.destructive();
    if (labels.length > 0)
      consider(0.9, 'destructive_commands', `destructive command: ${labels.join(', ')}`, true);
  }
  if (plan.phraseMatcher) {
    let exact = 0;
    let fuzzy = 0;
    const which = new Set<string>();
    for (const v of ctx.views) {
      for (const h of plan.phraseMatcher.find(v, 20)) {
        if (h.fuzzy) fuzzy++;
        else exact++;
        which.add(plan.phrases[h.keyword] ?? '');
      }
    }
    if (exact > 0)
      consider(
        0.95,
        'phrase',
        `rule phrase matched exactly: ${[...which].map((p) => `"${p}"`).join(', ')}`,
        true,
      );
    else if (fuzzy > 0)
      consider(
        0.75,
        'phrase',
        `rule phrase matched approximately: ${[...which].map((p) => `"${p}"`).join(', ')}`,
        true,
      );
  }
  for (const { source: src, re } of plan.regexes) {
    if (ctx.views.some((v) => re.test(v.text, ctx.regexBudget)))
      consider(0.95, 'regex', `rule regex ${src} matched`, true);
  }

  let confidence = plan.confidence;
  if (plan.topic)
    consider(
      topicScore(plan, ctx, evidence),
      'topic',
      `off-topic for "${plan.topic.subject || 'the system prompt'}"`,
    );
  if (scoredByMeaning(plan)) {
    // Unmapped rules, and rules made only of phrases/regexes (paraphrases miss exact phrases),
    // get a lexical signal, and one by meaning when the encoder read the text. Topic rules do
    // not: mentioning the topic is what they allow.
    const lex = lexicalScore(plan, ctx);
    if (lex > 0) consider(lex, 'lexical', 'lexical relevance to the rule text (low confidence)');
    const meaning = ctx.meaning?.(plan);
    if (meaning !== undefined)
      consider(meaning, 'meaning', 'close in meaning to the rule text (encoder; low confidence)');
  }
  if (source === 'lexical' || source === 'topic' || source === 'meaning') confidence = 'low';
  return {
    score: r2(Math.min(1, Math.max(0, score))),
    source,
    evidence,
    confidence,
    deterministic: r2(deterministic),
  };
}

/**
 * A rule about harm in general is answered by the overall harm score alone, with no category's
 * words or meaning to confirm it, so it takes a stricter point: the overall score `at` scores 0.5
 * (linear on each side, 0 and 1 kept). `at` 0.5 leaves the score as it is.
 */
export function generalHarmScore(any: number, at: number): number {
  if (!(at > 0 && at < 1)) return any;
  return any < at ? (0.5 * any) / at : 0.5 + (0.5 * (any - at)) / (1 - at);
}

/**
 * Rules that no detector or scanner answers and that are no topic constraint: scored by their
 * words (lexical relevance) and, when the encoder reads the text, by meaning.
 */
export function scoredByMeaning(plan: RulePlan): boolean {
  const detectorMapped =
    plan.harm.length > 0 ||
    plan.harmGeneral ||
    plan.jailbreak ||
    plan.injection ||
    plan.indirectInjection ||
    plan.leakage ||
    plan.pii !== null ||
    plan.secrets ||
    plan.destructive;
  return !detectorMapped && !plan.topic;
}

function lexicalScore(plan: RulePlan, ctx: RuleContext): number {
  if (plan.lexicalTerms.size === 0) return 0;
  const present = new Set(ctx.contentStems());
  let total = 0;
  let hit = 0;
  let hits = 0;
  for (const [term, w] of plan.lexicalTerms) {
    total += w;
    if (present.has(term)) {
      hit += w;
      hits++;
    }
  }
  if (hits === 0 || total === 0) return 0;
  return Math.min(0.75, 0.15 + 0.6 * (hit / total));
}

function topicScore(plan: RulePlan, ctx: RuleContext, evidence: string[]): number {
  const topic = plan.topic;
  if (!topic) return 0;
  const terms = topic.terms.size > 0 ? topic.terms : ctx.systemPromptStems();
  if (terms.size === 0) {
    evidence.push('topic rule without a subject and no system prompt to take it from');
    return 0;
  }
  const words = ctx.contentStems();
  if (words.length < 3) return 0.2;
  const prefixes = prefixesOf(terms);
  let hits = 0;
  for (const w of words) {
    if (terms.has(w)) {
      hits++;
      continue;
    }
    if (w.length >= 4 && sharesPrefix(w, terms, prefixes)) hits++;
  }
  if (hits >= 2) return 0.1;
  if (hits === 1) return 0.3;
  return words.length >= 6 ? 0.6 : 0.45;
}

/**
 * A word and a topic term "share a prefix" when one starts with the other (both 4+ letters).
 * Comparing every word with every term was quadratic when the terms come from a long system
 * prompt; set lookups make it linear. Stems over MAX_PREFIX_STEM characters are no words and
 * match only exactly.
 */
const MAX_PREFIX_STEM = 64;
const prefixCache = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

/** Every prefix of 4+ letters of the terms that take part in prefix matching. */
function prefixesOf(terms: ReadonlySet<string>): ReadonlySet<string> {
  let out = prefixCache.get(terms);
  if (!out) {
    const set = new Set<string>();
    for (const t of terms)
      if (t.length <= MAX_PREFIX_STEM) for (let k = 4; k <= t.length; k++) set.add(t.slice(0, k));
    prefixCache.set(terms, set);
    out = set;
  }
  return out;
}

function sharesPrefix(
  w: string,
  terms: ReadonlySet<string>,
  prefixes: ReadonlySet<string>,
): boolean {
  if (w.length <= MAX_PREFIX_STEM && prefixes.has(w)) return true; // a term starts with w
  const longest = Math.min(w.length, MAX_PREFIX_STEM);
  for (let k = 4; k <= longest; k++) if (terms.has(w.slice(0, k))) return true; // w starts with a term
  return false;
}

/** A loop, not `Math.max(...spread)`: a 200 KB text can hold more findings (~150,000) than a call takes arguments. */
export function maxConfidence(found: ReadonlyArray<{ confidence: number }>): number {
  let best = 0;
  for (const f of found) best = Math.max(best, f.confidence);
  return best;
}

/** Content stems of a text (shared helper for contexts). */
export function contentStemsOf(tokens: ReadonlyArray<{ word: string }>): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    if (t.word.length < 3 || STOPWORDS.has(t.word) || /^\d+$/.test(t.word)) continue;
    out.push(stem(t.word));
  }
  return out;
}
