/** One request through normalisation, detectors, scanners and the rule router: the local verdicts. */
import type { Detectors, HarmCategory, HarmOutput, Span } from '../detectors.js';
import type { EncoderMode, HarmTopic } from '../encoder/encoder.js';
import { MAX_SEGMENT_CHARS, segmentText } from '../ml/features.js';
import type { ScoreRequest } from '../engine-types.js';
import { scoreRule, type RuleContext } from '../router/score-rule.js';
import type { RulePlan } from '../router/rule-router.js';
import { harmCues } from '../router/harm-cues.js';
import { TextView } from '../scanners/keyword-matcher.js';
import { SAFE_REGEX_LIMITS, type RegexBudget } from '../scanners/safe-regex.js';
import type { MutationEvidence } from '../text/normalize.js';
import { dedupeEvidence } from '../text/normalized-text.js';
import { contentStemsOf } from '../router/score-rule.js';
import { splitConversation } from './conversation.js';
import { modeProfile } from './modes.js';
import { countTokens } from './token-counter.js';
import {
  BUILTIN_JAILBREAK_DESCRIPTION,
  r3,
  r3Side,
  type BuiltinRule,
  type IndirectSource,
  type LocalEvaluation,
} from './local-evaluation.js';
import type { CompiledPolicy, PolicyCompiler } from './compiled-policy.js';
import type { ConversationParts, ThirdPartyText } from './conversation.js';
import type { ModeProfile } from './modes.js';
import { runScannerBuiltins } from './scanner-builtins.js';
import { createScannerFindings } from './scanner-findings.js';
import {
  analyse,
  harmInContext,
  runDetector,
  runHarm,
  type Analysis,
  type DetectorResult,
  type OutputContext,
} from './text-analysis.js';

export interface LocalEvaluationDeps {
  detectors: Detectors;
  compile: PolicyCompiler;
  /** Where a rule about harm in general is violated (`harm_general` of encoder.json). */
  generalHarmAt?: number;
}

/** A sentence of a long input and the static detector's overall harm of it. */
export interface HarmSentence {
  text: string;
  harm: number;
}

/**
 * Where a sentence read for harm lies in the request (`scanner_output.harm.sentence`): the index
 * of the user message that holds it verbatim (its first), with UTF-16 offsets into that message's
 * text; only the score when normalisation changed it. The text itself is not kept: the result is
 * recorded as activity, and the text is the user's.
 */
export interface SentenceLocation {
  score: number;
  message?: number;
  start?: number;
  end?: number;
}

/** `sentence` located in the user messages of `parts` (`SentenceLocation`). */
export function locateSentence(sentence: HarmSentence, parts: ConversationParts): SentenceLocation {
  for (const m of parts.user) {
    const at = m.text.indexOf(sentence.text);
    if (at >= 0)
      return { score: sentence.harm, message: m.index, start: at, end: at + sentence.text.length };
  }
  return { score: sentence.harm };
}

/**
 * Longest piece of a long input read for its harm as one sentence: a request the harm heads
 * learnt is a sentence or two, and one inside a story or a scenario is diluted in a whole window.
 */
export const HARM_SENTENCE_CHARS = 200;

/** Sentences of one long input read for its harm, at most (each one encoder read). */
export const MAX_HARM_SENTENCES = 4;

/**
 * Sentences of one input scored by the static harm head, at most: an input the encoder reads in
 * windows holds about 1,000 tokens, but lines of characters that make no token (control
 * characters) would each be a sentence; past this many, the rest are not scored.
 */
export const MAX_SCORED_SENTENCES = 512;

/**
 * The sentences and lines of `text` (one over HARM_SENTENCE_CHARS characters cut into pieces of
 * that length; pieces without a letter or digit, and repeats, left out; the first
 * MAX_SCORED_SENTENCES of them) with the highest overall static harm, at most MAX_HARM_SENTENCES,
 * highest first (ties in text order).
 */
export function sentencesOf(text: string, detectors: Detectors): HarmSentence[] {
  const seen = new Set<string>();
  for (const seg of segmentText(text, HARM_SENTENCE_CHARS, false)) {
    const t = text.slice(seg.start, seg.end).trim();
    if (/[\p{L}\p{N}]/u.test(t)) seen.add(t);
    if (seen.size === MAX_SCORED_SENTENCES) break;
  }
  return [...seen]
    .map((t) => ({ text: t, harm: detectors.harm(t, 'prompt').any.score }))
    .sort((x, y) => y.harm - x.harm)
    .slice(0, MAX_HARM_SENTENCES);
}

/** The jailbreak score from the encoder stage (apply-encoder.ts), replacing the static one. */
export interface JailbreakStage {
  score: number;
  evidence: string;
}

/**
 * What is read from one request's text: the conversation split, the normalised analyses, the
 * detectors' scores and the third-party content's injection scores. `decide` turns it into
 * verdicts; the encoder stage sits between the two, so a routed request is analysed once.
 */
export interface RequestAnalysis {
  request: ScoreRequest;
  profile: ModeProfile;
  policy: CompiledPolicy;
  parts: ConversationParts;
  thresholds: { violation: number; jailbreak: number };
  /** Notes from reading the request (unknown mode, ignored rules); `decide` adds its own. */
  notes: readonly string[];
  mutationEvidence: readonly MutationEvidence[];
  userAn: Analysis;
  checkedAn: Analysis;
  /** The static detector's jailbreak result on the user input. */
  staticJailbreak: DetectorResult;
  injection: DetectorResult;
  /** Harm of the checked text alone (the output phase judges it with its request: `harm`). */
  checkedHarm: HarmOutput | null;
  harm: HarmOutput | null;
  /** Harm of the user's request (prompt calibration): `checkedHarm` on input. */
  requestHarm: HarmOutput | null;
  /**
   * The latest of several user messages, normalised, and its static harm, when it fits one read of
   * the encoder (up to 400 characters) and is plain text (nothing decoded): what the encoder stage
   * reads for the harm of a conversation too long to read whole. Worked out on first call (a
   * static pass over that message), since only the encoder stage asks, and only then.
   */
  latestRequest: () => { text: string; harm: HarmOutput } | null;
  /**
   * The sentences of the user input the static detector finds most harmful (`sentencesOf`), with
   * their overall static harm: what the encoder stage reads for the harm of a long input read in
   * windows (apply-encoder.ts, `harm_parts`). Worked out on first call, since only it asks.
   */
  harmSentences: () => HarmSentence[];
  /**
   * Whether the encoder stage read the request's harm with the static detector (`withRequestHarm`);
   * `staticHarm` is then the static detector's overall score of `harm`.
   */
  harmFrom: 'static' | 'encoder' | 'multilingual';
  staticHarm: number;
  /** The harm category the request speaks of by meaning, when the encoder stage read its harm. */
  requestTopic?: HarmTopic;
  /**
   * The sentence of a long input whose read raised the request's overall harm above what the rest
   * gave (apply-encoder.ts, `harm_parts`), with its score.
   */
  requestSentence?: HarmSentence;
  /** The multilingual reader's harm of the request (apply-multilingual.ts), when it read it. */
  multilingualHarm?: number;
  outputContext: OutputContext | null;
  /**
   * Output phase: the answer's own harm read by both models (apply-answer.ts, `answer_harm`), and
   * the static detector's score it replaced, when the encoder read it.
   */
  answerHarm?: { static: number; score: number };
  indirectSources: IndirectSource[];
  indirectScore: number;
  /**
   * The third-party texts behind `indirectSources` (same order), normalised, for the encoder stage
   * (apply-documents.ts): `decoded` when the normaliser revealed a payload in it.
   */
  thirdPartyTexts: Array<{ text: string; kind: ThirdPartyText['kind']; decoded: boolean }>;
  /** The user input the jailbreak signal reads (what the encoder stage reads too). */
  jailbreakInput: string;
  /** Payloads the normaliser decoded from that input (base64, URL encoding, ...). */
  jailbreakVariants: string[];
  /** The policy's `scanners_config.encoder`, when it sets one. */
  encoderMode: EncoderMode | undefined;
  /** `LocalEvaluationDeps.generalHarmAt`. */
  generalHarmAt?: number;
}

function describeSpans(spans: Span[]): string {
  const labels = [...new Set(spans.map((s) => s.label))].slice(0, 5);
  return labels.length > 0 ? `: ${labels.join(', ')}` : '';
}

/** One request through the static path: analysis, then decision. */
export function evaluateLocal(request: ScoreRequest, deps: LocalEvaluationDeps): LocalEvaluation {
  return decide(analyseRequest(request, deps));
}

export function analyseRequest(request: ScoreRequest, deps: LocalEvaluationDeps): RequestAnalysis {
  const { detectors } = deps;
  const profile = modeProfile(request.mode);
  const notes: string[] = [];
  if (!profile.known) notes.push(`unknown mode "${request.mode}" treated as content_moderation`);
  const policy = deps.compile(request);
  for (const p of policy.problems) notes.push(`${p} (ignored)`);
  const { vocabulary } = policy;

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
  const staticJailbreak = runDetector(
    userAn,
    (t) => detectors.jailbreak(t),
    revealed('user input'),
  );
  const injection = runDetector(
    userAn,
    (t) => detectors.injection(t, 'prompt'),
    revealed('user input'),
  );
  const checkedHarm = runHarm(
    detectors,
    checkedAn,
    input ? 'prompt' : 'response',
    revealed(input ? 'user input' : 'the output'),
  );
  // An answer is judged with the request it answers (see harmInContext).
  const requestHarm = input ? checkedHarm : runHarm(detectors, userAn, 'prompt', () => undefined);
  let latest: ReturnType<RequestAnalysis['latestRequest']> | undefined;
  const latestRequest = () =>
    latest !== undefined ? latest : (latest = latestOf(parts, vocabulary, detectors));
  let sentences: HarmSentence[] | undefined;
  const harmSentences = () => (sentences ??= sentencesOf(userAn.norm.canonical, detectors));
  const { harm, context: outputContext } = input
    ? { harm: checkedHarm, context: null }
    : harmInContext(detectors, checkedHarm, requestHarm, checkedAn);

  // Third-party content: indirect prompt injection.
  const indirectSources: IndirectSource[] = [];
  const thirdPartyTexts: RequestAnalysis['thirdPartyTexts'] = [];
  let indirectScore = 0;
  for (const tp of parts.thirdParty) {
    const an = analyse([{ index: -1, text: tp.text }], vocabulary);
    thirdPartyTexts.push({
      text: an.norm.canonical,
      kind: tp.kind,
      decoded: an.norm.variants.length > 0,
    });
    for (const e of an.norm.evidence)
      mutationEvidence.push({ ...e, detail: `${e.detail} (in ${tp.origin})` });
    const out = runDetector(an, (t) => detectors.injection(t, 'document'), revealed(tp.origin));
    // Tool descriptions are instructions to the model by design ("always call this when ..."):
    // rescale so that only strong evidence (>= ~0.65 raw) reaches the usual thresholds.
    const s = tp.kind === 'tool_definition' ? Math.max(0, (out.score - 0.3) / 0.7) : out.score;
    indirectSources.push({ origin: tp.origin, score: r3(s), detector: 'static' });
    indirectScore = Math.max(indirectScore, s);
  }

  return {
    request,
    profile,
    policy,
    parts,
    thresholds,
    notes,
    mutationEvidence,
    userAn,
    checkedAn,
    staticJailbreak,
    injection,
    checkedHarm,
    harm,
    requestHarm,
    latestRequest,
    harmSentences,
    harmFrom: 'static',
    staticHarm: harm?.any.score ?? 0,
    outputContext,
    indirectSources,
    indirectScore,
    thirdPartyTexts,
    jailbreakInput: userAn.joined,
    jailbreakVariants: userAn.norm.variants.map((v) => v.text),
    encoderMode: policy.config.encoder,
    ...(deps.generalHarmAt !== undefined ? { generalHarmAt: deps.generalHarmAt } : {}),
  };
}

/** `RequestAnalysis.latestRequest`. */
function latestOf(
  parts: ConversationParts,
  vocabulary: ReadonlySet<string>,
  detectors: Detectors,
): ReturnType<RequestAnalysis['latestRequest']> {
  const last = parts.user.at(-1);
  if (parts.user.length < 2 || !last || last.text.length > MAX_SEGMENT_CHARS) return null;
  const an = analyse([last], vocabulary);
  const harm = runHarm(detectors, an, 'prompt', () => undefined);
  const plain = an.norm.variants.length === 0 && an.norm.canonical.length <= MAX_SEGMENT_CHARS;
  return harm && plain ? { text: an.norm.canonical, harm } : null;
}

/**
 * `an` with its request's harm as the encoder stage read it with the static detector
 * (apply-encoder.ts): on input that is the harm the rules read; on output the answer is judged
 * with it again (`harmInContext`). `requestTopic`: the category the request speaks of by meaning.
 */
export function withRequestHarm(
  an: RequestAnalysis,
  requestHarm: HarmOutput,
  detectors: Detectors,
  read: { topic?: HarmTopic; multilingual?: number; sentence?: HarmSentence } = {},
): RequestAnalysis {
  const withRead = {
    ...an,
    requestHarm,
    harmFrom: read.multilingual !== undefined ? ('multilingual' as const) : ('encoder' as const),
    ...(read.topic ? { requestTopic: read.topic } : {}),
    ...(read.sentence ? { requestSentence: read.sentence } : {}),
    ...(read.multilingual !== undefined ? { multilingualHarm: read.multilingual } : {}),
  };
  if (an.parts.phase === 'input')
    return { ...withRead, harm: requestHarm, checkedHarm: requestHarm };
  const { harm, context } = harmInContext(detectors, an.checkedHarm, requestHarm, an.checkedAn);
  return { ...withRead, harm, outputContext: context };
}

/**
 * The verdicts on an analysed request: custom rules (with their scores by meaning, when the
 * encoder gave them), the built-in jailbreak rule (on the encoder stage's score when it gives one)
 * and the scanners. Leaves `an` unchanged.
 */
export function decide(
  an: RequestAnalysis,
  stage?: JailbreakStage,
  meaning?: ReadonlyMap<RulePlan, number>,
): LocalEvaluation {
  const { request, profile, policy, parts, thresholds, userAn, checkedAn, harm, checkedHarm } = an;
  const { indirectScore, indirectSources, injection } = an;
  const { config } = policy;
  const input = parts.phase === 'input';
  // The multilingual reader's harm of the request: what rules read on input, and what is reported.
  const multilingual =
    an.multilingualHarm !== undefined && input ? { multilingualHarm: an.multilingualHarm } : {};
  const notes = [...an.notes];
  const jailbreak: DetectorResult = stage
    ? { score: stage.score, spans: [], variant: 'text' }
    : an.staticJailbreak;
  const findings = createScannerFindings(config, profile, parts, checkedAn);
  const { piiFindings, secretFindings, leakage, destructive } = findings;
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
    contentStems: () => (checkedStems ??= checkedAn.views.flatMap((v) => contentStemsOf(v.tokens))),
    // The category the request speaks of by meaning, on input and, like its words, when the
    // answer is harmful through the request.
    ...(an.requestTopic && (input || harm !== checkedHarm) ? { harmTopic: an.requestTopic } : {}),
    // When the answer is harmful through the request it goes along with, the request's words
    // say which category ("Sure, step one: ..." names none).
    harmCues: () =>
      (cues ??= harmCues(
        harm !== checkedHarm
          ? [...ctx.contentStems(), ...userAn.views.flatMap((v) => contentStemsOf(v.tokens))]
          : ctx.contentStems(),
      )),
    systemPromptStems: () =>
      (systemStems ??= new Set(contentStemsOf(new TextView(parts.systemPrompt).tokens))),
    regexBudget,
    meaning: (plan) => meaning?.get(plan),
    ...(an.generalHarmAt !== undefined ? { generalHarmAt: an.generalHarmAt } : {}),
    ...multilingual,
  };

  const rules = policy.active.map((r) => ({
    index: r.index,
    plan: r.plan,
    evaluation: scoreRule(r.plan, ctx),
    mode: r.rule.mode as 'block' | 'observe',
  }));

  // Built-in rules: jailbreak always; scanners whose action is block/observe.
  const builtins: BuiltinRule[] = [
    {
      name: 'jailbreak',
      description: BUILTIN_JAILBREAK_DESCRIPTION,
      mode: 'block',
      score: r3Side(jailbreak.score, thresholds.jailbreak),
      threshold: thresholds.jailbreak,
      violated: jailbreak.score >= thresholds.jailbreak,
      evidence: [
        stage?.evidence ??
          `jailbreak detector ${r3Side(jailbreak.score, thresholds.jailbreak)}${describeSpans(jailbreak.spans)}${jailbreak.variant !== 'text' ? ` (in decoded ${jailbreak.variant} content)` : ''}`,
      ],
    },
  ];
  const scannerOutput: Record<string, unknown> = {};
  runScannerBuiltins(
    {
      request,
      parts,
      policy,
      rules,
      findings,
      checkedAn,
      violationThreshold: thresholds.violation,
      regexBudget,
    },
    scannerOutput,
    builtins,
    notes,
  );
  if (profile.ipiIsViolation && !rules.some((r) => r.plan.indirectInjection)) {
    const worst = [...indirectSources].sort((a, b) => b.score - a.score)[0];
    builtins.push({
      name: 'indirect_injection',
      description:
        'Built-in indirect prompt injection check on third-party content (prompt_injection mode).',
      mode: 'block',
      score: r3Side(indirectScore, profile.ipiThreshold),
      threshold: profile.ipiThreshold,
      violated: indirectScore >= profile.ipiThreshold,
      evidence: [
        `${worst?.detector === 'encoder' ? 'injection encoder' : 'injection detector'} on ${worst?.origin ?? 'third-party content'} ${r3(indirectScore)}`,
      ],
    });
  }
  if (profile.destructiveByDefault || rules.some((r) => r.plan.destructive)) {
    scannerOutput.destructive_commands = { labels: destructive() };
  }

  const decodedForJudge = [...userAn.norm.variants, ...(input ? [] : checkedAn.norm.variants)].map(
    (v) => `[${v.kind}] ${v.text.slice(0, 2000)}`,
  );
  const inputTokens = parts.scoredTexts.reduce((n, t) => n + countTokens(t), 0);

  return {
    request,
    parts,
    profile,
    thresholds,
    jailbreak,
    jailbreakFrom: stage ? 'encoder' : 'static',
    harmFrom: an.harmFrom,
    staticHarm: an.staticHarm,
    ...multilingual,
    ...(an.requestTopic ? { harmTopic: an.requestTopic } : {}),
    ...(an.requestSentence && input
      ? { harmSentence: locateSentence(an.requestSentence, parts) }
      : {}),
    injection,
    indirect: { score: r3(indirectScore), sources: indirectSources },
    ipiThreshold: profile.ipiThreshold,
    harm,
    outputContext: an.outputContext,
    ...(an.answerHarm && !input ? { answerHarm: an.answerHarm } : {}),
    mutationEvidence: dedupeEvidence(an.mutationEvidence),
    rules,
    builtins,
    scannerOutput,
    notes,
    decodedForJudge,
    inputTokens,
  };
}
