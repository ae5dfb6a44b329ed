/**
 * The scoring engine: normalisation, detectors, scanners and the rule router put together with
 * the semantics of spec/decisions.md, plus the judge for `hybrid` / `thinking`.
 *
 * `scoreSync` is the local-only path (no judge, no promise): what `reasoning_mode: off` runs.
 */
import {
  HARM_CATEGORIES,
  type DetectorOutput,
  type Detectors,
  type HarmOutput,
  type Span,
  type TextRole,
} from '../detectors.js';
import type {
  RuleScore,
  ScoreEngine,
  ScoreRequest,
  ScoreResult,
  ViolatedRuleDescription,
} from '../engine-types.js';
import {
  createJudgeClient,
  type Judge,
  type JudgeConfig,
  type JudgeOutcome,
  type JudgeRuleInput,
} from '../judge/judge-client.js';
import { compileRule, type RulePlan } from '../router/rule-router.js';
import {
  contentStemsOf,
  maxConfidence,
  scoreRule,
  type RuleContext,
  type RuleEvaluation,
} from '../router/score-rule.js';
import { harmCues } from '../router/harm-cues.js';
import type { HarmCategory } from '../detectors.js';
import { compileKeywords, TextView, type KeywordMatcher } from '../scanners/keyword-matcher.js';
import { leakageIndex, scanLeakage, type LeakageResult } from '../scanners/leakage-scanner.js';
import { redactText, scanPii, type PiiFinding } from '../scanners/pii-scanner.js';
import {
  compileSafeRegex,
  SAFE_REGEX_LIMITS,
  type RegexBudget,
  type RegexMatch,
  type SafeRegex,
} from '../scanners/safe-regex.js';
import {
  parseScannersConfig,
  type KeywordsConfig,
  type PiiType,
  type RegexConfig,
  type ScannerAction,
  type ScannersConfig,
} from '../scanners/scanners-config.js';
import { scanSecrets, type SecretFinding } from '../scanners/secrets-scanner.js';
import { normalizeText, type MutationEvidence, type NormalizedText } from '../text/normalize.js';
import { DESTRUCTIVE_PATTERNS } from '../router/rule-lexicon.js';
import { splitConversation, type CheckedMessage, type ConversationParts } from './conversation.js';
import { modeProfile, type ModeProfile } from './modes.js';
import { errorScoreResult } from './error-result.js';
import { countTokens, warmTokenizer } from './token-counter.js';

export interface HybridBand {
  /** A local score at or above `threshold - below` ... */
  below: number;
  /** ... and below `threshold + above` is uncertain and goes to the judge. */
  above: number;
}

export interface LocalEngineOptions {
  detectors: Detectors;
  /** A judge endpoint, or any Judge implementation. Without one, hybrid/thinking answer locally. */
  judge?: JudgeConfig | Judge;
  /** Default {below: 0.25, above: 0.2}. */
  hybridBand?: HybridBand;
  /** Load the tokenizer now rather than on the first request (default true). */
  warmup?: boolean;
}

export interface LocalEngine extends ScoreEngine {
  /** Local detectors only, synchronously (the `off` path; hybrid/thinking requests get local scores). */
  scoreSync(request: ScoreRequest): ScoreResult;
}

export const BUILTIN_JAILBREAK_DESCRIPTION =
  'Built-in jailbreak detection on user input (always evaluated).';
const DEFAULT_BAND: HybridBand = { below: 0.25, above: 0.2 };
const MAX_TRANSCRIPT_CHARS = 24_000;

// ---------------------------------------------------------------------------------------------

interface Analysis {
  messages: CheckedMessage[];
  joined: string;
  norm: NormalizedText;
  views: TextView[];
  variantKinds: string[];
}

interface DetectorResult extends DetectorOutput {
  /** Which text the spans point into: "text" (normalised) or a decoded variant kind. */
  variant: string;
}

interface BuiltinRule {
  name: string;
  description: string;
  mode: 'block' | 'observe';
  score: number;
  threshold: number;
  violated: boolean;
  evidence: string[];
}

interface LocalEvaluation {
  request: ScoreRequest;
  parts: ConversationParts;
  profile: ModeProfile;
  thresholds: { violation: number; jailbreak: number };
  jailbreak: DetectorResult;
  injection: DetectorResult;
  indirect: { score: number; sources: Array<{ origin: string; score: number }> };
  ipiThreshold: number;
  harm: HarmOutput | null;
  mutationEvidence: MutationEvidence[];
  rules: Array<{
    index: number;
    plan: RulePlan;
    evaluation: RuleEvaluation;
    mode: 'block' | 'observe';
  }>;
  builtins: BuiltinRule[];
  scannerOutput: Record<string, unknown>;
  notes: string[];
  decodedForJudge: string[];
  inputTokens: number;
}

const ZERO: DetectorOutput = { score: 0, spans: [] };

const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const clamp01 = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

/**
 * Findings per message index, built once: filtering the whole list for every message was
 * quadratic in long conversations (thousands of messages, each with a finding).
 */
function groupByMessage<T extends { message: number }>(found: readonly T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const f of found) {
    const list = out.get(f.message);
    if (list) list.push(f);
    else out.set(f.message, [f]);
  }
  return out;
}

function describeSpans(spans: Span[]): string {
  const labels = [...new Set(spans.map((s) => s.label))].slice(0, 5);
  return labels.length > 0 ? `: ${labels.join(', ')}` : '';
}

// ---------------------------------------------------------------------------------------------

export function createLocalEngine(options: LocalEngineOptions): LocalEngine {
  const detectors = options.detectors;
  const judge: Judge | undefined =
    options.judge === undefined
      ? undefined
      : 'evaluate' in options.judge
        ? options.judge
        : createJudgeClient(options.judge);
  const band = options.hybridBand ?? DEFAULT_BAND;
  if (options.warmup ?? true) warmTokenizer();

  const keywordCache = new WeakMap<KeywordsConfig, KeywordMatcher>();
  const regexCache = new WeakMap<RegexConfig, Array<{ label: string; re: SafeRegex }>>();

  function runDetector(
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

  function runHarm(
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

  // The normaliser's extra vocabulary per rule set: cached so its prefix index is built once.
  const vocabularyCache = new Map<string, ReadonlySet<string>>();
  function vocabularyFor(plans: RulePlan[], config: ScannersConfig): ReadonlySet<string> {
    const keywords = config.keywords?.enabled ? config.keywords.keywords : [];
    const key = plans.map((p) => p.vocabulary.join(' ')).join('|') + '#' + keywords.join('|');
    let v = vocabularyCache.get(key);
    if (!v) {
      const set = new Set<string>();
      for (const p of plans) for (const w of p.vocabulary) set.add(w);
      for (const k of keywords)
        for (const w of k.toLowerCase().split(/\s+/)) if (w.length >= 4) set.add(w);
      if (vocabularyCache.size >= 512) vocabularyCache.clear();
      vocabularyCache.set(key, set);
      v = set;
    }
    return v;
  }

  function analyse(messages: CheckedMessage[], vocabulary: ReadonlySet<string>): Analysis {
    const joined = messages.map((m) => m.text).join('\n\n');
    const norm = normalizeText(joined, { vocabulary });
    const views = [new TextView(norm.canonical), ...norm.variants.map((v) => new TextView(v.text))];
    return { messages, joined, norm, views, variantKinds: norm.variants.map((v) => v.kind) };
  }

  function evaluateLocal(request: ScoreRequest): LocalEvaluation {
    const profile = modeProfile(request.mode);
    const notes: string[] = [];
    if (!profile.known) notes.push(`unknown mode "${request.mode}" treated as content_moderation`);
    const parsed = parseScannersConfig(request.scanners_config);
    for (const p of parsed.problems) notes.push(`${p} (ignored)`);
    const config: ScannersConfig = parsed.config;

    const parts = splitConversation(request, { toolCallsAreOutput: profile.toolCallsAreOutput });
    const input = parts.phase === 'input';
    const thresholds = {
      violation: input
        ? request.thresholds.pre_violation_threshold
        : request.thresholds.post_violation_threshold,
      jailbreak: input
        ? request.thresholds.pre_jb_threshold
        : request.thresholds.post_violation_jb_threshold,
    };

    // Rules first: their vocabulary sharpens the normaliser.
    const active = request.rules
      .map((rule, i) => ({ rule, index: i + 1 }))
      .filter((r) => r.rule.mode !== 'disabled');
    const plans = active.map((r) => compileRule(r.rule.name, r.rule.description));
    const vocabulary = vocabularyFor(plans, config);

    const mutationEvidence: MutationEvidence[] = [];
    const revealed =
      (where: string) =>
      (variant: string, score: number): void => {
        mutationEvidence.push({
          kind: variant as MutationEvidence['kind'],
          detail: `decoded ${variant} content in ${where} scores ${r3(score)}, higher than the visible text`,
        });
      };

    const userAn = analyse(parts.user, vocabulary);
    const checkedAn = input ? userAn : analyse(parts.checked, vocabulary);
    for (const e of userAn.norm.evidence) mutationEvidence.push(e);
    if (!input)
      for (const e of checkedAn.norm.evidence)
        mutationEvidence.push({ ...e, detail: `${e.detail} (in the output)` });

    // Direct injection on user input stays out of the built-in jailbreak signal: measured, the
    // injection head also rises for short ordinary commands on prompts ("Please answer." 0.98),
    // so folding it in flagged 6-100% of benign rows per source (docs/detection-quality.md).
    const jailbreak = runDetector(userAn, (t) => detectors.jailbreak(t), revealed('user input'));
    const injection = runDetector(
      userAn,
      (t) => detectors.injection(t, 'prompt'),
      revealed('user input'),
    );
    const harm = runHarm(
      checkedAn,
      input ? 'prompt' : 'response',
      revealed(input ? 'user input' : 'the output'),
    );

    // Third-party content: indirect prompt injection.
    const indirectSources: Array<{ origin: string; score: number }> = [];
    let indirectScore = 0;
    for (const tp of parts.thirdParty) {
      const an = analyse([{ index: -1, text: tp.text }], vocabulary);
      for (const e of an.norm.evidence)
        mutationEvidence.push({ ...e, detail: `${e.detail} (in ${tp.origin})` });
      const out = runDetector(an, (t) => detectors.injection(t, 'document'), revealed(tp.origin));
      // Tool descriptions are instructions to the model by design ("always call this when ..."):
      // rescale so that only strong evidence (>= ~0.65 raw) reaches the usual thresholds.
      const s = tp.kind === 'tool_definition' ? Math.max(0, (out.score - 0.3) / 0.7) : out.score;
      indirectSources.push({ origin: tp.origin, score: r3(s) });
      indirectScore = Math.max(indirectScore, s);
    }

    // Scanners, lazily: only what a rule, the config or the mode asks for runs.
    const piiCfg =
      config.pii ??
      (profile.piiByDefault
        ? {
            enabled: true,
            pii_types: undefined,
            redact: profile.redactByDefault,
            redaction: 'type' as const,
            action: 'report' as const,
          }
        : undefined);
    const secretsCfg =
      config.secrets ??
      (profile.secretsByDefault
        ? {
            enabled: true,
            types: undefined,
            entropy: { enabled: true, min_length: 24, min_entropy: 4 },
            redact: false,
            action: 'report' as const,
          }
        : undefined);
    let piiAll: Array<PiiFinding & { message: number }> | null = null;
    const piiFindings = (): Array<PiiFinding & { message: number }> => {
      if (piiAll) return piiAll;
      const allowed = piiCfg?.pii_types ? new Set<PiiType>(piiCfg.pii_types) : undefined;
      piiAll = [];
      for (const m of parts.checked)
        for (const f of scanPii(m.text, allowed)) piiAll.push({ ...f, message: m.index });
      // Disguised PII (decoded payloads) counts too, without offsets into the original.
      for (const v of checkedAn.views.slice(1))
        for (const f of scanPii(v.text, allowed)) piiAll.push({ ...f, message: -1 });
      return piiAll;
    };
    let secretsAll: Array<SecretFinding & { message: number }> | null = null;
    const secretFindings = (): Array<SecretFinding & { message: number }> => {
      if (secretsAll) return secretsAll;
      const opts = {
        types: secretsCfg?.types ? new Set(secretsCfg.types) : undefined,
        entropy: secretsCfg?.entropy,
      };
      secretsAll = [];
      for (const m of parts.checked)
        for (const f of scanSecrets(m.text, opts)) secretsAll.push({ ...f, message: m.index });
      for (const v of checkedAn.views.slice(1))
        for (const f of scanSecrets(v.text, opts)) secretsAll.push({ ...f, message: -1 });
      return secretsAll;
    };
    const systemPromptText = config.system_prompt?.text ?? parts.systemPrompt;
    let leak: LeakageResult | null | undefined;
    const leakage = (): LeakageResult | null => {
      if (leak !== undefined) return leak;
      leak =
        systemPromptText.trim().length === 0 || input
          ? null
          : scanLeakage(
              checkedAn.norm.canonical,
              leakageIndex(systemPromptText, config.system_prompt?.ngram_size ?? 5),
            );
      return leak;
    };
    let destructiveLabels: string[] | null = null;
    const destructive = (): string[] => {
      if (destructiveLabels) return destructiveLabels;
      const labels = new Set<string>();
      for (const v of checkedAn.views)
        for (const p of DESTRUCTIVE_PATTERNS) if (p.re.test(v.text)) labels.add(p.label);
      destructiveLabels = [...labels];
      return destructiveLabels;
    };
    let checkedStems: string[] | null = null;
    let cues: ReadonlySet<HarmCategory> | null = null;
    let systemStems: Set<string> | null = null;
    const askForInstructions =
      /\b(?:system prompt|instructions|initial prompt|your prompt|hidden prompt|guidelines|rules|configuration)\b/i.test(
        userAn.norm.canonical,
      );

    const regexBudget: RegexBudget = { steps: SAFE_REGEX_LIMITS.requestStepBudget };
    const ctx: RuleContext = {
      phase: parts.phase,
      views: checkedAn.views,
      harm,
      jailbreak,
      injection,
      indirect: { score: indirectScore, spans: [] },
      asksForInstructions: askForInstructions,
      pii: (types) => {
        const wanted = types.length === 0 ? null : new Set(types);
        return piiFindings().filter((f) => wanted === null || wanted.has(f.type));
      },
      secrets: secretFindings,
      leakage,
      destructive,
      contentStems: () =>
        (checkedStems ??= checkedAn.views.flatMap((v) => contentStemsOf(v.tokens))),
      harmCues: () => (cues ??= harmCues(ctx.contentStems())),
      systemPromptStems: () =>
        (systemStems ??= new Set(contentStemsOf(new TextView(parts.systemPrompt).tokens))),
      regexBudget,
    };

    const rules = active.map((r, k) => {
      const plan = plans[k] as RulePlan;
      return {
        index: r.index,
        plan,
        evaluation: scoreRule(plan, ctx),
        mode: r.rule.mode as 'block' | 'observe',
      };
    });

    // Built-in rules: jailbreak always; scanners whose action is block/observe.
    const builtins: BuiltinRule[] = [
      {
        name: 'jailbreak',
        description: BUILTIN_JAILBREAK_DESCRIPTION,
        mode: 'block',
        score: r3(jailbreak.score),
        threshold: thresholds.jailbreak,
        violated: jailbreak.score >= thresholds.jailbreak,
        evidence: [
          `jailbreak detector ${r3(jailbreak.score)}${describeSpans(jailbreak.spans)}${jailbreak.variant !== 'text' ? ` (in decoded ${jailbreak.variant} content)` : ''}`,
        ],
      },
    ];
    const scannerOutput: Record<string, unknown> = {};
    const addBuiltin = (
      name: string,
      action: ScannerAction,
      score: number,
      evidence: string,
    ): void => {
      if (action === 'report') return;
      builtins.push({
        name,
        description: `Built-in ${name.replace(/_/g, ' ')} scanner (scanners_config).`,
        mode: action,
        score: r3(score),
        threshold: thresholds.violation,
        violated: score >= thresholds.violation,
        evidence: [evidence],
      });
    };

    if (piiCfg?.enabled || rules.some((r) => r.plan.pii)) {
      const found = piiCfg?.enabled === false ? [] : piiFindings();
      const out: Record<string, unknown> = {
        count: found.length,
        findings: found.map((f) => ({
          type: f.type,
          subtype: f.subtype,
          message: f.message,
          start: f.start,
          end: f.end,
          confidence: f.confidence,
        })),
      };
      if (piiCfg?.redact) {
        const perMessage = groupByMessage(found);
        out.redacted_messages = parts.checked
          .map((m) => ({
            index: m.index,
            content: redactText(m.text, perMessage.get(m.index) ?? [], piiCfg.redaction),
          }))
          .filter((m, k) => m.content !== parts.checked[k]?.text);
        if (request.messages.length === 1 && parts.checked.length === 1)
          out.redacted_text = redactText(
            parts.checked[0]?.text ?? '',
            found.filter((f) => f.message >= 0),
            piiCfg.redaction,
          );
      }
      scannerOutput.pii = out;
      if (piiCfg?.enabled && found.length > 0)
        addBuiltin(
          'pii',
          piiCfg.action,
          maxConfidence(found),
          `PII scanner: ${found.length} finding(s)`,
        );
    }
    if (secretsCfg?.enabled || rules.some((r) => r.plan.secrets)) {
      const found = secretsCfg?.enabled === false ? [] : secretFindings();
      const out: Record<string, unknown> = {
        count: found.length,
        findings: found.map((f) => ({
          type: f.type,
          subtype: f.subtype,
          message: f.message,
          start: f.start,
          end: f.end,
          confidence: f.confidence,
        })),
      };
      if (secretsCfg?.redact) {
        const perMessage = groupByMessage(found);
        out.redacted_messages = parts.checked
          .map((m) => ({
            index: m.index,
            content: redactText(
              m.text,
              (perMessage.get(m.index) ?? []).map((f) => ({ ...f, type: 'secret' })),
            ),
          }))
          .filter((m, k) => m.content !== parts.checked[k]?.text);
      }
      scannerOutput.secrets = out;
      if (secretsCfg?.enabled && found.length > 0)
        addBuiltin(
          'secrets',
          secretsCfg.action,
          maxConfidence(found),
          `secrets scanner: ${found.length} finding(s)`,
        );
    }
    if (config.system_prompt?.enabled || rules.some((r) => r.plan.leakage)) {
      const l = leakage();
      scannerOutput.system_prompt = l
        ? { checked: true, score: l.score, coverage: l.coverage, matched_words: l.matchedWords }
        : {
            checked: false,
            reason: input ? 'input phase: leakage is checked on output' : 'no system prompt known',
          };
      if (config.system_prompt?.enabled && l)
        addBuiltin(
          'system_prompt_leak',
          config.system_prompt.action,
          l.score,
          `output reproduces ${Math.round(l.coverage * 100)}% of the system prompt`,
        );
    }
    if (config.keywords?.enabled && config.keywords.keywords.length > 0) {
      const kc = config.keywords;
      let matcher = keywordCache.get(kc);
      if (!matcher) {
        matcher = compileKeywords(kc.keywords, {
          fuzzy: kc.fuzzy,
          caseSensitive: kc.case_sensitive,
        });
        keywordCache.set(kc, matcher);
      }
      const hits = checkedAn.views.flatMap((v, k) =>
        matcher.find(v, 50).map((h) => ({
          keyword: kc.keywords[h.keyword],
          fuzzy: h.fuzzy,
          variant: k === 0 ? 'text' : (checkedAn.variantKinds[k - 1] ?? 'variant'),
          start: h.start,
          end: h.end,
        })),
      );
      scannerOutput.keywords = { count: hits.length, matches: hits };
      if (hits.length > 0)
        addBuiltin(
          'keywords',
          kc.action,
          hits.some((h) => !h.fuzzy) ? 0.95 : 0.75,
          `keywords scanner: ${hits.length} match(es)`,
        );
    }
    if (config.regex?.enabled && config.regex.patterns.length > 0) {
      const rc = config.regex;
      let compiled = regexCache.get(rc);
      if (!compiled) {
        compiled = rc.patterns.map((p) => ({
          label: p.name ?? p.pattern,
          re: compileSafeRegex(p.pattern, p.flags),
        }));
        regexCache.set(rc, compiled);
      }
      const texts = [...parts.checked.map((m) => m.text), ...checkedAn.views.map((v) => v.text)];
      const matches: Array<{ pattern: string; start: number; end: number; message: number }> = [];
      for (const { label, re } of compiled) {
        // The canonical text is usually the message itself: scan each distinct text once.
        const scanned = new Map<string, RegexMatch[]>();
        texts.forEach((t, k) => {
          if (matches.length >= 100) return;
          let found = scanned.get(t);
          if (!found) {
            found = re.findAll(t, 20, regexBudget);
            scanned.set(t, found);
          }
          for (const m of found)
            matches.push({
              pattern: label,
              start: m.start,
              end: m.end,
              message: k < parts.checked.length ? (parts.checked[k]?.index ?? -1) : -1,
            });
        });
      }
      // The same span in the original and the normalised text is one match.
      const unique = new Map(matches.map((m) => [`${m.pattern}:${m.start}:${m.end}`, m] as const));
      scannerOutput.regex = { count: unique.size, matches: [...unique.values()] };
      if (unique.size > 0)
        addBuiltin('regex', rc.action, 0.95, `regex scanner: ${unique.size} match(es)`);
    }
    if (regexBudget.steps <= 0)
      notes.push(
        `regex matching stopped at its budget of ${SAFE_REGEX_LIMITS.requestStepBudget} steps per request; later patterns or texts were not fully searched`,
      );
    if (profile.ipiIsViolation && !rules.some((r) => r.plan.indirectInjection)) {
      const worst = [...indirectSources].sort((a, b) => b.score - a.score)[0];
      builtins.push({
        name: 'indirect_injection',
        description:
          'Built-in indirect prompt injection check on third-party content (prompt_injection mode).',
        mode: 'block',
        score: r3(indirectScore),
        threshold: profile.ipiThreshold,
        violated: indirectScore >= profile.ipiThreshold,
        evidence: [
          `injection detector on ${worst?.origin ?? 'third-party content'} ${r3(indirectScore)}`,
        ],
      });
    }
    if (profile.destructiveByDefault || rules.some((r) => r.plan.destructive)) {
      scannerOutput.destructive_commands = { labels: destructive() };
    }

    const decodedForJudge = [
      ...userAn.norm.variants,
      ...(input ? [] : checkedAn.norm.variants),
    ].map((v) => `[${v.kind}] ${v.text.slice(0, 2000)}`);
    const inputTokens = parts.scoredTexts.reduce((n, t) => n + countTokens(t), 0);

    return {
      request,
      parts,
      profile,
      thresholds,
      jailbreak,
      injection,
      indirect: { score: r3(indirectScore), sources: indirectSources },
      ipiThreshold: profile.ipiThreshold,
      harm,
      mutationEvidence: dedupeEvidence(mutationEvidence),
      rules,
      builtins,
      scannerOutput,
      notes,
      decodedForJudge,
      inputTokens,
    };
  }

  function finalize(ev: LocalEvaluation, judgeInfo: JudgeApplied | null): ScoreResult {
    const t = ev.thresholds;
    const ruleScores: RuleScore[] = ev.rules.map(({ index, plan, evaluation, mode }) => {
      const verdict = judgeInfo?.applied.get(String(index));
      const score = verdict ? verdict.score : evaluation.score;
      return {
        rule: index,
        name: plan.name,
        mode,
        score,
        threshold: t.violation,
        violated: score >= t.violation,
        confidence: evaluation.confidence,
        source: verdict
          ? `judge (local ${evaluation.source} ${evaluation.score})`
          : evaluation.source,
        evidence: verdict
          ? [
              ...evaluation.evidence,
              `judge: ${verdict.violated ? 'violated' : 'not violated'} (${verdict.score})`,
            ]
          : evaluation.evidence,
      };
    });
    const jbVerdict = judgeInfo?.applied.get('jailbreak');
    const jb = ev.builtins[0];
    if (jb && jbVerdict) {
      jb.score = jbVerdict.score;
      jb.violated = jb.score >= jb.threshold;
      jb.evidence.push(
        `judge: ${jbVerdict.violated ? 'jailbreak' : 'no jailbreak'} (${jbVerdict.score})`,
      );
    }

    const violatedPolicy = ruleScores.filter((r) => r.violated);
    const violatedBuiltins = ev.builtins.filter((b) => b.violated);
    const blockScores = [
      ...violatedPolicy.filter((r) => r.mode === 'block').map((r) => r.score),
      ...violatedBuiltins.filter((b) => b.mode === 'block').map((b) => b.score),
    ];
    const observeScores = [
      ...violatedPolicy.filter((r) => r.mode === 'observe').map((r) => r.score),
      ...violatedBuiltins.filter((b) => b.mode === 'observe').map((b) => b.score),
    ];
    const violation = blockScores.length > 0 ? Math.max(...blockScores) : 0;
    const observeViolation =
      blockScores.length === 0 && observeScores.length > 0 ? Math.max(...observeScores) : null;

    const descriptions: ViolatedRuleDescription[] = [
      ...violatedPolicy.map((r) => ({
        rule: r.rule,
        name: r.name,
        description: ev.rules.find((x) => x.index === r.rule)?.plan.description ?? '',
      })),
      ...violatedBuiltins.map((b) => ({ rule: 0, name: b.name, description: b.description })),
    ];
    const ipi = ev.indirect.score >= ev.ipiThreshold;
    const mutation = ev.mutationEvidence.length > 0;
    const alarm = blockScores.length > 0 || (jb?.violated ?? false) || ipi || mutation;

    const scannerOutput: Record<string, unknown> = {
      phase: ev.parts.phase,
      mode: ev.profile.mode,
      thresholds: { violation: t.violation, jailbreak: t.jailbreak, ipi: ev.ipiThreshold },
      jailbreak: {
        score: jb?.score ?? 0,
        local_score: r3(ev.jailbreak.score),
        threshold: t.jailbreak,
        violated: jb?.violated ?? false,
        spans: ev.jailbreak.spans,
        text: ev.jailbreak.variant,
      },
      injection: {
        score: r3(ev.injection.score),
        spans: ev.injection.spans,
        text: ev.injection.variant,
      },
      indirect_injection: {
        score: ev.indirect.score,
        threshold: ev.ipiThreshold,
        detected: ipi,
        sources: ev.indirect.sources,
      },
      harm: ev.harm
        ? {
            score: r3(ev.harm.any.score),
            categories: Object.fromEntries(
              HARM_CATEGORIES.map((c) => [c, r3(ev.harm?.categories[c].score ?? 0)]),
            ),
          }
        : { score: 0, categories: {} },
      mutation: { detected: mutation, evidence: ev.mutationEvidence },
      ...ev.scannerOutput,
      rules: ruleScores,
      builtin_rules: ev.builtins.map((b) => ({
        name: b.name,
        mode: b.mode,
        score: b.score,
        threshold: b.threshold,
        violated: b.violated,
      })),
    };
    if (judgeInfo) scannerOutput.judge = judgeInfo.summary;
    if (ev.notes.length > 0) scannerOutput.notes = ev.notes;

    return {
      violation: r3(violation),
      observe_violation: observeViolation === null ? null : r3(observeViolation),
      violated_rules: violatedPolicy.map((r) => r.rule),
      violated_rule_descriptions: descriptions,
      ipi,
      mutation,
      scanner_output: scannerOutput,
      reasoning: buildReasoning(ev, ruleScores, violation, observeViolation, ipi, judgeInfo),
      input_tokens: ev.inputTokens,
      output_tokens: judgeInfo?.outputTokens ?? 0,
      error: false,
      error_message: null,
      alarm,
      phase: ev.parts.phase,
    };
  }

  function scoreSync(request: ScoreRequest): ScoreResult {
    try {
      const ev = evaluateLocal(request);
      if (request.reasoning_mode !== 'off')
        ev.notes.push(
          `reasoning_mode ${request.reasoning_mode} requested on the synchronous path: local detectors only`,
        );
      return finalize(ev, null);
    } catch (e) {
      return errorScoreResult(request, e);
    }
  }

  async function score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
    signal?.throwIfAborted();
    let ev: LocalEvaluation;
    try {
      ev = evaluateLocal(request);
    } catch (e) {
      return errorScoreResult(request, e);
    }
    if (request.reasoning_mode === 'off') return finalize(ev, null);
    if (!judge) {
      return finalize(ev, {
        applied: new Map(),
        outputTokens: 0,
        summary: { consulted: false, reason: 'no judge model configured' },
        lines: [
          `reasoning_mode ${request.reasoning_mode}: no judge model is configured, so the local detectors answered.`,
        ],
      });
    }
    const candidates = selectForJudge(ev, request.reasoning_mode, band);
    if (candidates.length === 0) {
      return finalize(ev, {
        applied: new Map(),
        outputTokens: 0,
        summary: { consulted: false, reason: 'all local scores confident' },
        lines: [
          'reasoning_mode hybrid: every local score was clearly above or below its threshold, so the judge was not consulted.',
        ],
      });
    }
    let outcome: JudgeOutcome;
    try {
      outcome = await judge.evaluate(
        {
          phase: ev.parts.phase,
          transcript: renderTranscript(request),
          decoded: ev.decodedForJudge,
          rules: candidates,
          withReasoning: request.reasoning_mode === 'thinking',
        },
        signal,
      );
    } catch (e) {
      if (signal?.aborted) throw e;
      outcome = {
        ok: false,
        error: e instanceof Error ? e.message : String(e),
        outputTokens: 0,
        latencyMs: 0,
      };
    }
    return finalize(ev, applyJudge(ev, candidates, outcome, request.reasoning_mode));
  }

  return { score, scoreSync };
}

// ---------------------------------------------------------------------------------------------
// Judge selection and application

interface JudgeApplied {
  applied: Map<string, { score: number; violated: boolean; reasoning: string }>;
  outputTokens: number;
  summary: Record<string, unknown>;
  lines: string[];
}

function selectForJudge(
  ev: LocalEvaluation,
  mode: 'hybrid' | 'thinking',
  band: HybridBand,
): JudgeRuleInput[] {
  const out: JudgeRuleInput[] = [];
  const t = ev.thresholds;
  const uncertain = (s: number, threshold: number): boolean =>
    s >= threshold - band.below && s < threshold + band.above;
  for (const r of ev.rules) {
    const e = r.evaluation;
    const certainExact = e.deterministic >= t.violation;
    const pick =
      mode === 'thinking' ||
      (!certainExact &&
        (uncertain(e.score, t.violation) || (e.confidence === 'low' && e.score >= 0.15)));
    if (pick) out.push({ id: String(r.index), name: r.plan.name, description: r.plan.description });
  }
  // The jailbreak threshold is low (0.3 by default): a band below it of half the threshold keeps
  // ordinary prompts (calibrated scores near 0) away from the judge.
  const jb = ev.jailbreak.score;
  if (mode === 'thinking' || (jb >= t.jailbreak * 0.5 && jb < t.jailbreak + band.above)) {
    out.push({
      id: 'jailbreak',
      name: 'jailbreak',
      description:
        'The user input tries to make the model ignore its rules or safety guidelines (jailbreak).',
    });
  }
  return out;
}

function applyJudge(
  ev: LocalEvaluation,
  candidates: JudgeRuleInput[],
  outcome: JudgeOutcome,
  mode: 'hybrid' | 'thinking',
): JudgeApplied {
  const ids = candidates.map((c) => c.id);
  if (!outcome.ok) {
    return {
      applied: new Map(),
      outputTokens: outcome.outputTokens,
      summary: {
        consulted: true,
        ok: false,
        error: outcome.error,
        rules: ids,
        latency_ms: outcome.latencyMs,
      },
      lines: [
        `reasoning_mode ${mode}: the judge failed (${outcome.error}); local scores were used for every rule.`,
      ],
    };
  }
  const applied = new Map<string, { score: number; violated: boolean; reasoning: string }>();
  const lines: string[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    const v = outcome.verdicts.get(id);
    if (!v) {
      missing.push(id);
      continue;
    }
    const rule = ev.rules.find((r) => String(r.index) === id);
    // Exact matches (phrases, regexes, scanner findings) are facts: the judge cannot talk them down.
    const floor = rule ? rule.evaluation.deterministic : 0;
    const score = r3(Math.max(v.score, floor));
    applied.set(id, { score, violated: v.violated, reasoning: v.reasoning });
    const label = rule ? `rule ${id} '${rule.plan.name}'` : 'jailbreak';
    if (mode === 'thinking' || v.reasoning)
      lines.push(
        `Judge on ${label}: ${v.violated ? 'violated' : 'not violated'} (${score})${v.reasoning ? ` — ${v.reasoning}` : ''}`,
      );
  }
  if (missing.length > 0)
    lines.push(`The judge gave no verdict for ${missing.join(', ')}; local scores kept there.`);
  return {
    applied,
    outputTokens: outcome.outputTokens,
    summary: {
      consulted: true,
      ok: true,
      model: outcome.model,
      rules: ids,
      missing,
      latency_ms: outcome.latencyMs,
    },
    lines: [
      `reasoning_mode ${mode}: judge ${outcome.model} consulted on ${ids.length} item(s).`,
      ...lines,
    ],
  };
}

function renderTranscript(request: ScoreRequest): string {
  const parts: string[] = [];
  for (const m of request.messages) {
    let line = `[${m.role}${m.name ? ` ${m.name}` : ''}] ${m.content}`;
    for (const c of m.tool_calls ?? []) line += `\n[tool call ${c.name}] ${c.arguments}`;
    parts.push(line);
  }
  let text = parts.join('\n\n');
  // Keep the end: the checked turn is last.
  if (text.length > MAX_TRANSCRIPT_CHARS)
    text = `[... earlier conversation truncated ...]\n${text.slice(-MAX_TRANSCRIPT_CHARS)}`;
  return text;
}

// ---------------------------------------------------------------------------------------------
// Reasoning

function buildReasoning(
  ev: LocalEvaluation,
  rules: RuleScore[],
  violation: number,
  observeViolation: number | null,
  ipi: boolean,
  judgeInfo: JudgeApplied | null,
): string {
  const t = ev.thresholds;
  const lines: string[] = [];
  const side = ev.parts.phase === 'input' ? 'user input' : 'model output';
  lines.push(
    `Checked the ${side} against the ${ev.parts.phase === 'input' ? 'pre' : 'post'} thresholds (violation ${t.violation}, jailbreak ${t.jailbreak}); mode ${ev.profile.mode}.`,
  );
  const violated = rules.filter((r) => r.violated);
  for (const r of violated) {
    lines.push(
      `Rule ${r.rule} '${r.name}' (${r.mode}) violated: ${r.score} >= ${r.threshold}, from ${r.source}${r.evidence.length > 0 ? `; ${r.evidence.join('; ')}` : ''}.`,
    );
  }
  const jb = ev.builtins[0];
  if (jb) {
    lines.push(
      jb.violated
        ? `Jailbreak signal ${jb.score} reached its threshold ${jb.threshold}: counted as built-in rule 'jailbreak' (${jb.evidence.join('; ')}).`
        : `Jailbreak signal ${jb.score} stayed below ${jb.threshold}.`,
    );
  }
  for (const b of ev.builtins.slice(1)) {
    if (b.violated)
      lines.push(
        `Built-in rule '${b.name}' (${b.mode}) violated: ${b.score} (${b.evidence.join('; ')}).`,
      );
  }
  if (violated.length === 0 && rules.length > 0) {
    const top = [...rules].sort((a, b) => b.score - a.score)[0];
    if (top)
      lines.push(
        `No policy rule reached its threshold; the highest was rule ${top.rule} '${top.name}' at ${top.score} (${top.source}).`,
      );
  }
  for (const r of rules) {
    const plan = ev.rules.find((x) => x.index === r.rule)?.plan;
    if (r.confidence === 'low' && plan && plan.mapped.length === 0) {
      lines.push(
        `Rule ${r.rule} '${r.name}' maps to no detector; it was scored by lexical relevance only (low confidence).`,
      );
    } else if (r.confidence === 'low') {
      lines.push(`Rule ${r.rule} '${r.name}' was scored by ${r.source} only (low confidence).`);
    }
    for (const n of plan?.notes ?? []) lines.push(`Rule ${r.rule} '${r.name}': ${n}.`);
  }
  if (violation === 0 && observeViolation !== null)
    lines.push(
      `Only observe rules were violated: violation is 0 and observe_violation is ${observeViolation}.`,
    );
  if (ev.mutationEvidence.length > 0) {
    lines.push(
      `Disguised input (mutation): ${ev.mutationEvidence.map((e) => e.detail).join('; ')}. The normalised and decoded text was scored.`,
    );
  }
  if (ipi) {
    const worst = [...ev.indirect.sources].sort((a, b) => b.score - a.score)[0];
    lines.push(
      `Indirect prompt injection: ${worst?.origin ?? 'third-party content'} carries instructions aimed at the model (${ev.indirect.score} >= ${ev.ipiThreshold}).`,
    );
  }
  if (judgeInfo) lines.push(...judgeInfo.lines);
  else if (ev.request.reasoning_mode === 'off')
    lines.push('reasoning_mode off: local detectors only.');
  for (const n of ev.notes) lines.push(`Note: ${n}.`);
  return lines.join('\n');
}

function dedupeEvidence(evidence: MutationEvidence[]): MutationEvidence[] {
  const seen = new Set<string>();
  return evidence.filter((e) => {
    const k = `${e.kind}:${e.detail}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
