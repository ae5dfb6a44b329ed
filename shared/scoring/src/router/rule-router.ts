/**
 * The rule router: reads a rule's name and description once and decides which detectors and
 * scanners score it. Plans are kept with the compiled policy they belong to
 * (engine/compiled-policy.ts).
 *
 * What maps to what:
 * - harm vocabulary (per category tables in rule-lexicon.ts) -> the learned harm detector's category
 * - only words of harm in general ("harmful", "illegal", "crime") -> the harm detector's overall score
 * - jailbreak / prompt-injection / indirect-injection words -> those detectors
 * - "system prompt" + reveal/leak words -> system-prompt leakage scanner (output) / injection (input)
 * - PII words (and which types) -> PII scanner; secret/credential words -> secrets scanner
 * - destructive-command words -> built-in destructive command patterns
 * - quoted phrases, and lists after "mention/say/discuss/..." -> exact (and fuzzy) phrase matches
 * - regexes written as /.../ or `...` after "regex"/"pattern" -> safe-regex matches
 * - "only talk about X", "stay on topic", "limited to X" -> topic constraint
 * Nothing mapped: the rule is scored by lexical relevance and marked low-confidence.
 */
import { HARM_CATEGORIES, type HarmCategory } from '../detectors.js';
import { compileKeywords, type KeywordMatcher } from '../scanners/keyword-matcher.js';
import { compileSafeRegex, SafeRegexError, type SafeRegex } from '../scanners/safe-regex.js';
import type { PiiType } from '../scanners/scanners-config.js';
import { COMMON_WORDS, STOPWORDS } from '../text/word-lists.js';
import { stem, tokenizeWords } from '../text/words.js';
import {
  GENERAL_HARM_FILLER,
  GENERIC_PII_TERMS,
  PII_TYPE_TERMS,
  RULE_LEXICON,
  type RouteTarget,
} from './rule-lexicon.js';

export interface RulePlan {
  name: string;
  description: string;
  harm: HarmCategory[];
  /**
   * A rule about harm in general ("no harmful or illegal requests"): no category, no other
   * detector, and no word but general harm words and common ones. Scored by the overall harm
   * score (`generalHarmScore` in score-rule.ts).
   */
  harmGeneral: boolean;
  jailbreak: boolean;
  injection: boolean;
  indirectInjection: boolean;
  leakage: boolean;
  /** null: not mapped to PII; otherwise the types the rule names (all types for generic wording). */
  pii: PiiType[] | null;
  secrets: boolean;
  destructive: boolean;
  phrases: string[];
  phraseMatcher: KeywordMatcher | null;
  regexes: Array<{ source: string; re: SafeRegex }>;
  /** Topic constraint: allowed subject terms (stems). Empty set: "stay on topic" of the system prompt. */
  topic: { subject: string; terms: ReadonlySet<string> } | null;
  /** Content stems of the rule with weights, for lexical relevance. */
  lexicalTerms: ReadonlyMap<string, number>;
  /** Human-readable routing, e.g. ["harm:weapons", "phrases:2"]. */
  mapped: string[];
  /** Things the router could not use (e.g. an unsafe regex). */
  notes: string[];
  /** Words that, if disguised in the input, reveal intent (fed to the normaliser). */
  vocabulary: string[];
  /** `high` when a detector/scanner/phrase/regex is mapped; `low` for topic or lexical only. */
  confidence: 'high' | 'low';
}

// ---- lexicon index -----------------------------------------------------------------------------

interface LexEntry {
  target: RouteTarget;
  phrase: string;
}

const MAX_PHRASE_WORDS = 4;
/** stemmed phrase -> targets, per phrase length */
const LEX_BY_LEN: Array<Map<string, LexEntry[]>> = [];
for (let n = 0; n <= MAX_PHRASE_WORDS; n++) LEX_BY_LEN.push(new Map());
for (const entry of RULE_LEXICON) {
  for (const term of entry.terms) {
    const stems = tokenizeWords(term).map((t) => stem(t.word));
    if (stems.length === 0 || stems.length > MAX_PHRASE_WORDS) continue;
    const key = stems.join(' ');
    const map = LEX_BY_LEN[stems.length];
    if (!map) continue;
    const list = map.get(key) ?? [];
    list.push({ target: entry.target, phrase: term });
    map.set(key, list);
  }
}

const stemPhrase = (p: string): string =>
  tokenizeWords(p)
    .map((t) => stem(t.word))
    .join(' ');
const PII_TYPE_INDEX = PII_TYPE_TERMS.map((e) => ({
  type: e.type,
  stems: e.terms.map(stemPhrase),
}));
const GENERIC_PII = GENERIC_PII_TERMS.map(stemPhrase);
const STRONG_MINOR_TERMS = new Set(
  ['csam', 'csem', 'child sexual abuse', 'groom', 'child exploitation', 'pedophilia'].map(
    stemPhrase,
  ),
);
const INJECTION_GATE = new Set([
  'instruction',
  'injection',
  'inject',
  'prompt',
  'command',
  'hidden',
  'jailbreak',
]);
const LEAK_GATE = new Set(['prompt', 'instruction', 'system']);
/** Stems a rule about harm in general may consist of (with stopwords and common words). */
const GENERAL_HARM_STEMS: ReadonlySet<string> = new Set([
  ...RULE_LEXICON.filter((e) => e.target.kind === 'harm_general').flatMap((e) =>
    e.terms.flatMap((t) => tokenizeWords(t).map((w) => stem(w.word))),
  ),
  ...[...GENERAL_HARM_FILLER].map(stem),
]);
const GENERIC_LEAK_TERMS = new Set(['leak', 'leakage'].map(stemPhrase));

function targetKey(t: RouteTarget): string {
  return t.kind === 'harm' ? `harm:${t.category}` : t.kind;
}

// ---- extraction of rule forms -----------------------------------------------------------------

const QUOTED_RE =
  /"([^"\n]{1,120})"|“([^”\n]{1,120})”|(?<![\p{L}\p{N}])'([^'\n]{2,60})'(?![\p{L}\p{N}])|`([^`\n]{1,120})`/gu;
const REGEX_SLASH_RE =
  /\b(?:regex|regexp|regular expression|pattern|matching|matches|match)\b\s*:?\s*\/((?:\\.|[^/\\\n]){1,500})\/([gimsuy]{0,6})/gi;
const REGEX_TICK_RE = /\b(?:regex|regexp|regular expression|pattern)\b\s*:?\s*`([^`\n]{1,500})`/gi;
const MENTION_RE =
  /\b(?:mention|mentions|mentioning|say|says|saying|name|naming|recommend|recommending|promote|promoting|endorse|endorsing|discuss|discussing|talk about|talking about|refer to|referring to|use the (?:words?|terms?|phrases?|names?))\s+(?:the\s+|any\s+|our\s+)?(?:(?:words?|terms?|phrases?|names?|brands?|competitors?|compan(?:y|ies)|products?|topics?|subjects?)\s+)?(?:(?:like|such as|including|e\.g\.)\s+|:\s*)?([^.;\n]{1,300})/gi;
const NOUN_LIST_RE =
  /\b(?:words?|terms?|phrases?|names?|brands?|competitors?|compan(?:y|ies)|products?)\s*(?:like|such as|including|e\.g\.|:)\s+([^.;\n]{1,300})/gi;
const TOPIC_RES: RegExp[] = [
  /\bonly\s+(?:talk|discuss|answer|respond|help|chat|write|speak|reply|converse)(?:s|ing)?\s+(?:(?:questions|queries|requests|topics)\s+)?(?:about|on|regarding|related to|relating to|concerning|with|to questions about)\s+([^.;\n]{1,200})/i,
  /\b(?:stay|remain|keep)\s+on[- ]topic\b(?:\s*[:,(-]\s*|\s+(?:about|of|which is|namely)\s+)?([^.;\n)]{0,200})/i,
  /\b(?:restricted|limited|confined)\s+to\s+(?:(?:the\s+)?(?:topics?|subjects?|questions)\s+(?:of|about)\s+)?([^.;\n]{1,200})/i,
  /\bmust\s+(?:only\s+)?(?:be\s+)?(?:about|related to)\s+([^.;\n]{1,200})/i,
  /\bnothing\s+(?:but|other than)\s+([^.;\n]{1,200})/i,
  /\b(?:no|avoid|block)\s+off[- ]topic\b()/i,
];
const LIST_SPLIT_RE = /\s*(?:,|;|\/|\bor\b|\band\b|\bnor\b|\betc\.?)\s*/i;
const LEADING_ARTICLE_RE = /^(?:the|a|an|any|our|their|its|other)\s+/i;

function extractQuoted(description: string): string[] {
  const out: string[] = [];
  QUOTED_RE.lastIndex = 0;
  for (let m = QUOTED_RE.exec(description); m !== null; m = QUOTED_RE.exec(description)) {
    const p = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim();
    if (p.length > 0) out.push(p);
  }
  return out;
}

function extractRegexes(
  description: string,
  notes: string[],
): Array<{ source: string; re: SafeRegex }> {
  const out: Array<{ source: string; re: SafeRegex }> = [];
  const add = (pattern: string, flags: string): void => {
    try {
      // Rules are natural language: match case-insensitively unless the author said otherwise.
      const f = flags.replace(/[gy]/g, '');
      out.push({ source: `/${pattern}/${f || 'i'}`, re: compileSafeRegex(pattern, f || 'i') });
    } catch (e) {
      notes.push(
        `regex /${pattern}/ ignored: ${e instanceof SafeRegexError ? e.message : 'invalid'}`,
      );
    }
  };
  REGEX_SLASH_RE.lastIndex = 0;
  for (let m = REGEX_SLASH_RE.exec(description); m !== null; m = REGEX_SLASH_RE.exec(description))
    add(m[1] ?? '', m[2] ?? '');
  REGEX_TICK_RE.lastIndex = 0;
  for (let m = REGEX_TICK_RE.exec(description); m !== null; m = REGEX_TICK_RE.exec(description))
    add(m[1] ?? '', '');
  return out;
}

function isTopicConstraint(description: string): { subject: string } | null {
  for (const re of TOPIC_RES) {
    const m = re.exec(description);
    if (m) return { subject: (m[1] ?? '').trim() };
  }
  return null;
}

function contentStems(text: string): string[] {
  const out: string[] = [];
  for (const t of tokenizeWords(text)) {
    if (STOPWORDS.has(t.word) || t.word.length < 2 || /^\d+$/.test(t.word)) continue;
    out.push(stem(t.word));
  }
  return out;
}

// ---- compile -----------------------------------------------------------------------------------

export function compileRule(name: string, description: string): RulePlan {
  const notes: string[] = [];
  const nameText = name.replace(/[_\-.]+/g, ' ');
  const quoted = extractQuoted(description);
  // Quoted text is matched literally; it must not also steer the category routing.
  let unquoted = description;
  for (const q of quoted) unquoted = unquoted.split(q).join(' ');
  const regexes = extractRegexes(description, notes);

  // Greedy longest-phrase routing over the name (weight 2) and the description (weight 1).
  const weights = new Map<string, { target: RouteTarget; weight: number; phrases: Set<string> }>();
  const stemSet = new Set<string>();
  const phraseSet = new Set<string>();
  for (const [text, weight] of [
    [nameText, 2],
    [unquoted, 1],
  ] as const) {
    const stems = tokenizeWords(text).map((t) => stem(t.word));
    for (const s of stems) stemSet.add(s);
    let i = 0;
    while (i < stems.length) {
      let consumed = 1;
      for (let len = Math.min(MAX_PHRASE_WORDS, stems.length - i); len >= 1; len--) {
        const key = stems.slice(i, i + len).join(' ');
        const entries = LEX_BY_LEN[len]?.get(key);
        if (!entries) continue;
        phraseSet.add(key);
        for (const e of entries) {
          const k = targetKey(e.target);
          const w = weights.get(k) ?? { target: e.target, weight: 0, phrases: new Set<string>() };
          if (!w.phrases.has(key)) {
            w.weight += weight;
            w.phrases.add(key);
          }
          weights.set(k, w);
        }
        consumed = len;
        break;
      }
      i += consumed;
    }
  }
  // Multi-word phrases from the whole text (for PII type selection and gates).
  const fullStems = [...tokenizeWords(`${nameText} ${unquoted}`)]
    .map((t) => stem(t.word))
    .join(' ');
  const hasPhrase = (p: string): boolean => p.length > 0 && ` ${fullStems} `.includes(` ${p} `);

  // Gates: words that only mean something in company.
  const indirect = weights.get('indirect_injection');
  if (indirect && ![...INJECTION_GATE].some((g) => stemSet.has(g)))
    weights.delete('indirect_injection');
  const leak = weights.get('leakage');
  if (
    leak &&
    [...leak.phrases].every((p) => GENERIC_LEAK_TERMS.has(p)) &&
    ![...LEAK_GATE].some((g) => stemSet.has(g))
  ) {
    weights.delete('leakage');
  }
  const minors = weights.get('harm:sexual_minors');
  if (minors) {
    const strong = [...minors.phrases].some((p) => STRONG_MINOR_TERMS.has(p));
    if (!strong && !weights.has('harm:sexual')) weights.delete('harm:sexual_minors');
    else weights.delete('harm:sexual'); // "sexual content involving minors" is about minors only
  }

  // Harm in general stands apart: it answers a rule only when nothing else does.
  const general = weights.get('harm_general');
  weights.delete('harm_general');
  let best = 0;
  for (const w of weights.values()) best = Math.max(best, w.weight);
  const chosen = [...weights.values()].filter((w) => w.weight >= 1 && w.weight >= 0.5 * best);

  const harm: HarmCategory[] = [];
  let jailbreak = false;
  let injection = false;
  let indirectInjection = false;
  let leakage = false;
  let piiMapped = false;
  let secrets = false;
  let destructive = false;
  for (const w of chosen) {
    const t = w.target;
    switch (t.kind) {
      case 'harm':
        harm.push(t.category);
        break;
      case 'harm_general':
        break;
      case 'jailbreak':
        jailbreak = true;
        break;
      case 'injection':
        injection = true;
        break;
      case 'indirect_injection':
        indirectInjection = true;
        break;
      case 'leakage':
        leakage = true;
        break;
      case 'pii':
        piiMapped = true;
        break;
      case 'secrets':
        secrets = true;
        break;
      case 'destructive':
        destructive = true;
        break;
    }
  }
  harm.sort((a, b) => HARM_CATEGORIES.indexOf(a) - HARM_CATEGORIES.indexOf(b));

  let pii: PiiType[] | null = null;
  if (piiMapped) {
    const named = PII_TYPE_INDEX.filter((e) => e.stems.some(hasPhrase)).map((e) => e.type);
    const generic = GENERIC_PII.some(hasPhrase);
    pii = named.length > 0 && !generic ? named : [];
    if (generic && named.length > 0) pii = [];
  }

  // Lists after "mention/say/discuss ..." that are not category words become phrases.
  const listed: string[] = [];
  const topic = isTopicConstraint(description);
  if (!topic) {
    const lists: string[] = [];
    for (const re of [MENTION_RE, NOUN_LIST_RE]) {
      re.lastIndex = 0;
      for (let m = re.exec(unquoted); m !== null; m = re.exec(unquoted)) lists.push(m[1] ?? '');
    }
    for (const list of lists) {
      for (const raw of list.split(LIST_SPLIT_RE)) {
        const item = raw
          .trim()
          .replace(LEADING_ARTICLE_RE, '')
          .replace(/[()"']/g, '')
          .trim();
        const words = tokenizeWords(item);
        if (words.length === 0 || words.length > 4 || item.length > 40) continue;
        if (words.every((w) => STOPWORDS.has(w.word) || COMMON_WORDS.has(w.word))) continue;
        const stemmed = words.map((w) => stem(w.word)).join(' ');
        if (phraseSet.has(stemmed) || words.some((w) => phraseSet.has(stem(w.word)))) continue;
        listed.push(item);
      }
    }
  }
  const phrases = [...new Set([...quoted, ...listed])];
  const harmGeneral =
    general !== undefined &&
    chosen.length === 0 &&
    phrases.length === 0 &&
    regexes.length === 0 &&
    !topic &&
    tokenizeWords(`${nameText} ${unquoted}`).every(
      (t) =>
        STOPWORDS.has(t.word) ||
        COMMON_WORDS.has(t.word) ||
        /^\d+$/.test(t.word) ||
        GENERAL_HARM_STEMS.has(stem(t.word)),
    );
  const phraseMatcher = phrases.length > 0 ? compileKeywords(phrases, { fuzzy: true }) : null;

  let topicPlan: RulePlan['topic'] = null;
  if (topic) topicPlan = { subject: topic.subject, terms: new Set(contentStems(topic.subject)) };

  // Lexical weights: names (capitalised mid-sentence) say most about a rule, common words least.
  const lexicalTerms = new Map<string, number>();
  const lexText = `${nameText}. ${description}`;
  for (const t of tokenizeWords(lexText)) {
    if (STOPWORDS.has(t.word) || t.word.length < 3 || /^\d+$/.test(t.word)) continue;
    const first = lexText[t.start] ?? '';
    const before = lexText.slice(Math.max(0, t.start - 2), t.start);
    const properNoun = first !== first.toLowerCase() && !/[.!?:]\s?$/.test(before) && t.start > 0;
    const w = properNoun ? 2 : COMMON_WORDS.has(t.word) ? 0.5 : 1;
    const k = stem(t.word);
    lexicalTerms.set(k, Math.max(w, lexicalTerms.get(k) ?? 0));
  }

  const mapped: string[] = [];
  for (const c of harm) mapped.push(`harm:${c}`);
  if (harmGeneral) mapped.push('harm:general');
  if (jailbreak) mapped.push('jailbreak');
  if (injection) mapped.push('injection');
  if (indirectInjection) mapped.push('indirect_injection');
  if (leakage) mapped.push('system_prompt_leakage');
  if (pii) mapped.push(pii.length === 0 ? 'pii:all' : `pii:${pii.join('+')}`);
  if (secrets) mapped.push('secrets');
  if (destructive) mapped.push('destructive_commands');
  if (phrases.length > 0) mapped.push(`phrases:${phrases.length}`);
  if (regexes.length > 0) mapped.push(`regex:${regexes.length}`);
  if (topicPlan)
    mapped.push(topicPlan.subject ? `topic:${topicPlan.subject}` : 'topic:system_prompt');

  const vocabulary = new Set<string>();
  for (const p of phrases)
    for (const t of tokenizeWords(p)) if (t.word.length >= 4) vocabulary.add(t.word);
  for (const t of tokenizeWords(nameText))
    if (t.word.length >= 4 && !STOPWORDS.has(t.word)) vocabulary.add(t.word);

  const strong =
    harm.length > 0 ||
    harmGeneral ||
    jailbreak ||
    injection ||
    indirectInjection ||
    leakage ||
    pii !== null ||
    secrets ||
    destructive ||
    phrases.length > 0 ||
    regexes.length > 0;
  return {
    name,
    description,
    harm,
    harmGeneral,
    jailbreak,
    injection,
    indirectInjection,
    leakage,
    pii,
    secrets,
    destructive,
    phrases,
    phraseMatcher,
    regexes,
    topic: topicPlan,
    lexicalTerms,
    mapped,
    notes,
    vocabulary: [...vocabulary],
    confidence: strong ? 'high' : 'low',
  };
}
