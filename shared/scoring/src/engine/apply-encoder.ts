/**
 * The jailbreak cascade: the static detector answers the inputs it is sure are harmless; the
 * rest (or every input, in mode `all`) are read by the contextual encoder, whose calibrated score
 * replaces the static one. Measured on sources neither model was trained on, the encoder catches
 * far more scenario, fiction and human-written jailbreaks (docs/detection-quality.md).
 * The same encoder's embeddings score the custom rules no detector answers by meaning
 * (`encoderRuleMeaning`).
 */
import { HARM_CATEGORIES, type HarmOutput } from '../detectors.js';
import {
  calibratedHarm,
  calibratedJailbreak,
  calibratedSentenceHarm,
  cosine,
  embedHarmTopics,
  nearestHarmTopic,
  ruleMeaningScore,
  type Encoder,
  type EncoderItem,
  type EncoderManifest,
  type EncoderMode,
  type EmbeddedHarmTopic,
  type HarmTopic,
} from '../encoder/encoder.js';
import type { RulePlan } from '../router/rule-router.js';
import type { MultilingualStage } from './apply-multilingual.js';
import { MAX_CHARS } from '../encoder/encoder-input.js';
import { MAX_SEGMENT_CHARS, segmentText } from '../ml/features.js';
import type { HarmSentence, JailbreakStage, RequestAnalysis } from './evaluate-local.js';
import { r3 } from './local-evaluation.js';

/**
 * Windows of a long input the encoder reads, at most (about 1,000 tokens, some 4 KB of English).
 * A longer input is read by its opening and end and the segments the static detector flagged.
 */
export const MAX_WINDOWS = 8;

/**
 * Flagged segments of an input too long for MAX_WINDOWS windows the encoder reads, at most (split
 * to fit its window, each part counts): past them the static score stands (the encoder only
 * adds), so the cost of a request stays bounded (some 32 x 10 ms on one core) and an attack the
 * static detector flags cannot be hidden among segments the encoder does not read. The static
 * detector flags most segments of a long run of ordinary requests, so with 8, as until 2026-11-29,
 * such a prompt of 5-6 KB kept the static verdict nearly half the time.
 */
export const MAX_FLAGGED_READS = 32;

/** Tokens of "prompt: " in front of every text the encoder reads. */
const PREFIX_TOKENS = 2;

/** What the encoder reads of a request (`encoderReads`), and how. */
export interface EncoderReads {
  /** What is read of the input itself: the whole of it, or its parts (`inParts`). */
  texts: string[];
  /** Payloads the normaliser decoded (base64, URL encoding, ...), each read whole. */
  variants: string[];
  /**
   * The input is read in parts (windows, or its opening and end plus flagged segments): the
   * highest part is scored at the operating point of long inputs (`jailbreak_parts`).
   */
  inParts: boolean;
  /** Windows the input was read in (1: as it is, or by its opening and end). */
  windows: number;
  /**
   * The input is too long to read as it is and read in windows that each fit the encoder (one or
   * more), so that none of it goes unread: not by its opening and end.
   */
  inWindows: boolean;
  /** Segments the static detector flagged, read besides the opening and end of a very long input. */
  flagged: number;
  /** False when the flagged segments were too many to read: the static score then stands. */
  complete: boolean;
}

/**
 * What the encoder reads of an analysed request, besides every payload the normaliser decoded:
 * an input that fits its window (`head_tokens + tail_tokens`) as it is; a longer one in windows
 * that each fit, made of consecutive segments of the static detector (at most 400 characters,
 * split at lines and sentences; a segment over the window split in halves until its parts fit),
 * so that no part of it goes unread and ordinary text around an attack cannot hide it; one too
 * long for MAX_WINDOWS windows by its opening and end and each segment the static detector
 * flagged (split the same way). `complete` is false when those are more than MAX_FLAGGED_READS.
 */
export function encoderReads(
  an: RequestAnalysis,
  stage: Pick<EncoderStage, 'manifest' | 'countTokens'>,
): EncoderReads {
  const whole = {
    texts: [an.jailbreakInput],
    variants: an.jailbreakVariants,
    inParts: false,
    windows: 1,
    inWindows: false,
    flagged: 0,
    complete: true,
  };
  const sj = an.staticJailbreak;
  if (readWhole(an)) return whole;
  const long = { ...whole, inParts: true };
  const text = an.userAn.norm.canonical;
  const budget = windowBudget(stage);
  const fit = (segs: readonly Piece[]) => fitting(text, segs, budget, stage.countTokens);
  const windows = textWindows(text, stage);
  if (windows) return { ...long, texts: windows, windows: windows.length, inWindows: true };
  const flagged: Piece[] = [];
  for (const p of fit(sj.spans)) {
    // Lazy: a long text can have hundreds of flagged segments; one past the limit is enough.
    if (flagged.length === MAX_FLAGGED_READS) return { ...long, complete: false };
    flagged.push(p);
  }
  return {
    ...long,
    texts: [an.jailbreakInput, ...flagged.map((p) => text.slice(p.start, p.end))],
    flagged: flagged.length,
  };
}

/** Tokens of text one encoder read holds (its window less the role prefix). */
function windowBudget(stage: Pick<EncoderStage, 'manifest'>): number {
  return stage.manifest.head_tokens + stage.manifest.tail_tokens - PREFIX_TOKENS;
}

/**
 * Whether one encoder read holds all of `text` (encoder-input.ts `encoderIds` cuts it neither to
 * its first MAX_CHARS characters nor to its opening and end). A text over MAX_CHARS is not
 * tokenised.
 */
export function fitsOneRead(
  text: string,
  stage: Pick<EncoderStage, 'manifest' | 'countTokens'>,
): boolean {
  return text.length <= MAX_CHARS && stage.countTokens(text) <= windowBudget(stage);
}

/**
 * `text` cut into windows the encoder reads whole: consecutive segments of the static detector
 * (at most 400 characters, split at lines and sentences; one over the window split in halves
 * until its parts fit) packed up to the window. Null when more than `max` (by default MAX_WINDOWS)
 * would be needed.
 */
export function textWindows(
  text: string,
  stage: Pick<EncoderStage, 'manifest' | 'countTokens'>,
  max = MAX_WINDOWS,
): string[] | null {
  const budget = windowBudget(stage);
  return packWindows(
    text,
    fitting(text, segmentText(text), budget, stage.countTokens),
    budget,
    max,
  );
}

/** Whether the encoder reads the input as it is (short, or decided in a decoded payload). */
function readWhole(an: RequestAnalysis): boolean {
  return an.jailbreakInput.length <= MAX_SEGMENT_CHARS || an.staticJailbreak.variant !== 'text';
}

interface Piece {
  start: number;
  end: number;
}

/**
 * The non-blank parts of `segs` with their token counts, a part over `budget` tokens split in
 * halves (by characters) until each fits. Lazy: callers stop when they have enough.
 */
function* fitting(
  text: string,
  segs: Iterable<Piece>,
  budget: number,
  countTokens: (text: string) => number,
): Generator<Piece & { tokens: number }> {
  for (const seg of segs) {
    if (!/\S/u.test(text.slice(seg.start, seg.end))) continue;
    const tokens = countTokens(text.slice(seg.start, seg.end));
    if (tokens <= budget || seg.end - seg.start < 2) {
      yield { start: seg.start, end: seg.end, tokens };
      continue;
    }
    const mid = seg.start + Math.floor((seg.end - seg.start) / 2);
    yield* fitting(
      text,
      [
        { start: seg.start, end: mid },
        { start: mid, end: seg.end },
      ],
      budget,
      countTokens,
    );
  }
}

/**
 * Consecutive pieces packed into windows of at most `budget` tokens, or null when more than `max`
 * windows would be needed (so a long text is tokenised only about that far).
 */
function packWindows(
  text: string,
  pieces: Iterable<Piece & { tokens: number }>,
  budget: number,
  max: number,
): string[] | null {
  const out: string[] = [];
  let open: { start: number; end: number; tokens: number } | null = null;
  for (const p of pieces) {
    if (open && open.tokens + p.tokens <= budget) {
      open.end = p.end;
      open.tokens += p.tokens;
      continue;
    }
    if (open) {
      out.push(text.slice(open.start, open.end));
      if (out.length >= max) return null;
    }
    open = { ...p };
  }
  if (open) out.push(text.slice(open.start, open.end));
  return out;
}

export interface EncoderStage {
  /** For policies that do not set `scanners_config.encoder`. */
  defaultMode: EncoderMode;
  manifest: EncoderManifest;
  /** The encoder, loaded on first use. */
  encoder: () => Promise<Encoder>;
  /** WordPiece tokens of a text in the encoder's vocabulary: how a long input is cut into windows. */
  countTokens: (text: string) => number;
  /** The multilingual reader for requests in other languages (apply-multilingual.ts). */
  multilingual?: MultilingualStage;
}

/** The encoder mode of a request: its policy's (`scanners_config.encoder`), else the default. */
export function modeOf(an: RequestAnalysis, stage: EncoderStage): EncoderMode {
  return an.encoderMode ?? stage.defaultMode;
}

/** What the encoder stage changes of an analysed request's verdicts (`encoderStage`). */
export interface EncoderVerdicts {
  /** The encoder's jailbreak score, replacing the static one (routed by it, or mode `all`). */
  jailbreak?: JailbreakStage;
  /**
   * The request's harm read by both models (`calibratedHarm`), replacing the static detector's
   * (`withRequestHarm`): a policy with harm rules and a manifest with a harm point. Read of a
   * conversation's latest message or of a long input's sentences (`calibratedSentenceHarm`), it
   * only raises the static one.
   */
  harm?: HarmOutput;
  /**
   * The harm category the request read for harm speaks of by meaning (`nearestHarmTopic`): a
   * category rule takes the overall harm score for it as for the category's words.
   */
  harmTopic?: HarmTopic;
  /**
   * The sentence of a long input whose read raised the harm above what the rest of the read gave,
   * with its score (`calibratedSentenceHarm`): what the result names as the reason.
   */
  harmSentence?: HarmSentence;
  /** Why the static verdicts stand: the encoder failed. */
  note?: string;
  /** The embeddings of what was read of the input (the whole of it or its parts). */
  read?: Float32Array[];
}

/**
 * The encoder's verdicts on an analysed request (`stage`): none when the static ones stand (mode
 * off, no user input, a cascade input below both routing points, a failing encoder, which returns
 * the `note` to add instead). Jailbreak: the encoder's calibrated score replaces the static one
 * for inputs routed by the static jailbreak score. Harm (policies with harm rules): the user
 * input routed by either score gets the static and the encoder's harm together (`calibratedHarm`,
 * `withOverall`), for an input read whole and not disguised, or by its latest message
 * (`harmTarget`); a long input read in windows by its most harmful sentences, which route it on
 * their own and can only raise the static harm (`harmSentenceReads`); on output the answer is then
 * judged with that request. `read`: the embeddings of what it read of the input, which custom
 * rules by meaning reuse.
 */
export async function encoderStage(
  an: RequestAnalysis,
  stage: EncoderStage,
  signal?: AbortSignal,
): Promise<EncoderVerdicts> {
  const mode = modeOf(an, stage);
  const staticScore = an.staticJailbreak.score;
  if (mode === 'off' || an.jailbreakInput.length === 0) return {};
  const { route_above: routeAbove, harm: harmPoint } = stage.manifest;
  const byJailbreak = mode === 'all' || staticScore >= routeAbove;
  const target = harmPoint && an.policy.readsHarm ? harmTarget(an) : null;
  const byHarm =
    target !== null && (mode === 'all' || target.harm.any.score >= (harmPoint?.route_above ?? 1));
  // A long input whose harm nothing else reads may still be read by its sentences (routed by them).
  const bySentences = target === null && sentencesMayApply(an, stage.manifest);
  if (!byJailbreak && !byHarm && !bySentences) return {};
  // When something was decoded (base64, URL encoding, ...) the input is disguised, and the encoder
  // only adds: the static detector's verdict on the decoded text stands (measured: a base64
  // jailbreak reads as harmless to the encoder in its encoded form). Likewise when the static
  // detector flagged more segments of a very long input than the encoder reads.
  const disguised = an.jailbreakVariants.length > 0;
  const reads: EncoderReads =
    byJailbreak || target?.latest === undefined ? encoderReads(an, stage) : NOTHING_READ;
  const sentences = bySentences ? harmSentenceReads(an, stage.manifest, reads) : [];
  if (!byJailbreak && !byHarm && sentences.length === 0) return {};
  // What is read of the input itself: routed by harm alone, only what harm needs (the input read
  // whole, or the latest message); routed by its sentences alone, none of it.
  const input = byJailbreak || byHarm ? reads : NOTHING_READ;
  const latest = byHarm ? target?.latest : undefined;
  const topicsPoint = byHarm ? stage.manifest.harm_topics : undefined;
  let score: number;
  let harmScore: number | null = null;
  let harmTopic: HarmTopic | null = null;
  let harmSentence: HarmSentence | null = null;
  let read: Float32Array[];
  try {
    const encoder = await stage.encoder();
    const texts = [...input.texts, ...input.variants, ...(latest ? [latest] : [])];
    const items = [...texts, ...sentences.map((s) => s.text)].map((text) => ({
      role: 'prompt' as const,
      text,
    }));
    const out = await encoder.encode(items, signal);
    if (out.length !== items.length) throw new Error('encoder answered for fewer texts than asked');
    read = out.slice(0, input.texts.length).map((o) => o.embedding);
    const part = (i: number) => input.inParts && i < input.texts.length;
    const whole = out.slice(0, input.texts.length + input.variants.length);
    score = Math.max(...whole.map((o, i) => calibratedJailbreak(encoder.manifest, o, part(i))));
    if (disguised || !input.complete) score = Math.max(score, staticScore);
    // What harm read: the latest message, or the input itself (read whole, nothing decoded).
    const harmRead = latest ? out.slice(texts.length - 1, texts.length) : whole;
    if (byHarm && target)
      harmScore = calibratedHarm(encoder.manifest, target.harm.any.score, harmRead);
    // A sentence is named when it raises the score above the rest of the read (`withOverall`).
    let raised = Math.max(an.requestHarm?.any.score ?? 0, harmScore ?? 0);
    sentences.forEach((s, i) => {
      const o = out[texts.length + i];
      const h = o ? calibratedSentenceHarm(encoder.manifest, s.harm, o) : null;
      if (h === null) return;
      harmScore = Math.max(harmScore ?? 0, h);
      if (h > raised) {
        raised = h;
        harmSentence = { ...s, harm: h };
      }
    });
    if (topicsPoint && harmScore !== null) {
      // The descriptions are read once per stage, by the first request that needs them.
      let embedded = topicEmbeddings.get(stage);
      if (!embedded)
        topicEmbeddings.set(
          stage,
          (embedded = await embedHarmTopics(encoder, topicsPoint.topics, signal)),
        );
      const [first] = harmRead;
      const nearest = first && nearestHarmTopic(first.embedding, embedded, topicsPoint.at);
      if (nearest && (topicsPoint.lends ?? HARM_CATEGORIES).includes(nearest.category))
        harmTopic = nearest;
    }
  } catch (e) {
    if (signal?.aborted) throw e;
    return {
      note: `encoder unavailable (${e instanceof Error ? e.message : String(e)}): the static detectors answered`,
    };
  }
  const how = [
    ...(disguised
      ? [`with ${an.jailbreakVariants.length} decoded payload(s), the higher score kept`]
      : []),
    ...(input.complete
      ? []
      : [`flagged segments needing more than ${MAX_FLAGGED_READS} reads, the higher score kept`]),
    ...(input.windows > 1 ? [`read in ${input.windows} windows`] : []),
    ...(input.flagged > 0
      ? [`opening and end, and ${input.flagged} read(s) of flagged segments`]
      : []),
  ];
  const why = [
    mode === 'all'
      ? 'encoder mode all'
      : `cascade: static score at or above ${routeAbove.toPrecision(2)}`,
    ...how,
  ].join('; ');
  // The sentences of a long input, like the latest message of a conversation, only add.
  const adds = latest !== undefined || sentences.length > 0;
  return {
    ...(byJailbreak
      ? {
          jailbreak: {
            score,
            evidence: `jailbreak encoder ${r3(score)} (static detector ${r3(staticScore)}; ${why})`,
          },
        }
      : {}),
    ...(an.requestHarm && harmScore !== null
      ? {
          harm: withOverall(an.requestHarm, harmScore, adds),
          ...(harmTopic ? { harmTopic } : {}),
          ...(harmSentence ? { harmSentence } : {}),
        }
      : {}),
    ...(read.length > 0 ? { read } : {}),
  };
}

/** Nothing of the input read (what the encoder stage reads when only other texts are). */
const NOTHING_READ: EncoderReads = {
  texts: [],
  variants: [],
  inParts: false,
  windows: 0,
  inWindows: false,
  flagged: 0,
  complete: true,
};

/**
 * Whether a request's sentences may be read for its harm (`harm_parts`): a user input too long to
 * read as it is (over 400 characters), plain (nothing decoded), in a policy with harm rules, with a
 * manifest that has the offset. Whether they are depends on how it is read (`harmSentenceReads`).
 */
function sentencesMayApply(an: RequestAnalysis, manifest: EncoderManifest): boolean {
  return (
    manifest.harm !== undefined &&
    manifest.harm_parts !== undefined &&
    an.policy.readsHarm &&
    an.requestHarm !== null &&
    !readWhole(an) &&
    an.jailbreakVariants.length === 0
  );
}

/** Whether the sentences of a request read as `reads` are read for its harm (`harmSentenceReads`). */
export function readsSentences(
  an: RequestAnalysis,
  manifest: EncoderManifest,
  reads: EncoderReads,
): boolean {
  return sentencesMayApply(an, manifest) && reads.inWindows;
}

/**
 * The sentences read for the harm of a long input (`harm_parts`), given how it is read (`reads`):
 * for an input `sentencesMayApply` to that the encoder reads in windows (one or more, up to
 * MAX_WINDOWS: not one read by its opening and end), those of its sentences the static detector
 * finds most harmful (`RequestAnalysis.harmSentences`) that reach the harm routing point, in the
 * cascade as in mode `all` (the offset was fitted on what this reads). The input is every user
 * message of the request, as the static harm reads it: the encoder stage reads a conversation's
 * latest message instead when that one is short (`harmTarget`), and then no sentences.
 */
export function harmSentenceReads(
  an: RequestAnalysis,
  manifest: EncoderManifest,
  reads: EncoderReads,
): HarmSentence[] {
  if (!readsSentences(an, manifest, reads)) return [];
  const at = manifest.harm?.route_above ?? 1;
  return an.harmSentences().filter((s) => s.harm >= at);
}

/** The embedded descriptions of the harm categories (`harm_topics`), per stage, read once. */
const topicEmbeddings = new WeakMap<EncoderStage, EmbeddedHarmTopic[]>();

/**
 * What the encoder reads for the harm of the request: the input itself when it is read whole and
 * not disguised; read in parts, at an offset that kept long ordinary prompts at 1%, it added
 * nothing to the static verdict on the calibration split (calibrate.ts, `long_*.harm_*`). A longer
 * input of several user messages (a conversation) is read by its latest message, when that is
 * short and plain (`RequestAnalysis.latestRequest`). `harm`: the static harm of what is read.
 */
export function harmTarget(an: RequestAnalysis): { harm: HarmOutput; latest?: string } | null {
  if (readWhole(an) && an.jailbreakVariants.length === 0)
    return an.requestHarm ? { harm: an.requestHarm } : null;
  // A short input with a decoded payload stays static: there is no longer whole to read apart.
  if (an.jailbreakInput.length <= MAX_SEGMENT_CHARS) return null;
  const l = an.latestRequest();
  return l ? { harm: l.harm, latest: l.text } : null;
}

/**
 * `h` (the static detector's harm of the whole request) with the overall score `any` read by both
 * models; no category above it. A category rule takes `any` itself when the text speaks of the
 * category (harm cues, score-rule.ts), as with the static score. `adds`: `any` was read of a part
 * of the request only (its latest message, or sentences of it), so it can only raise the whole
 * request's score. Lending `any` to the
 * categories by the static heads' shares was measured and not kept: on the validation split
 * harmful requests caught 44.8% instead of 19.0%, but benign rows flagged 4.8% instead of 1.3%
 * (ordinary one-sentence requests 6.0%, held-out languages 7.4%; docs/detection-quality.md).
 */
export function withOverall(h: HarmOutput, any: number, adds: boolean): HarmOutput {
  if (adds) return { ...h, any: { ...h.any, score: Math.max(h.any.score, any) } };
  const categories = { ...h.categories };
  for (const c of HARM_CATEGORIES)
    categories[c] = { ...h.categories[c], score: Math.min(h.categories[c].score, any) };
  return { any: { ...h.any, score: any }, categories };
}

/**
 * Rules read by the encoder for the first time in one request, at most: a policy may hold 500, and
 * a request that brings hundreds of new rules must not cost hundreds of encoder reads. The rest
 * are read by the requests that follow (scored by their words until then).
 */
export const MAX_NEW_RULE_READS = 32;

/** Rule embeddings of each stage, kept as long as the compiled policy holding the plan. */
const ruleEmbeddings = new WeakMap<EncoderStage, WeakMap<RulePlan, Float32Array>>();

/**
 * Custom rules by meaning: for the policy's rules that no detector answers (`byMeaning`),
 * the score of the checked text's embedding against the rule's own (`ruleMeaningScore`). `read`:
 * the embeddings of the checked text the jailbreak stage already read (its windows, for a long
 * input: the highest similarity counts); without them the text is read here, as the encoder reads
 * any input (a long one by its opening and end), in one call with the rules not embedded yet.
 * None when the encoder is off for the request, the manifest has no `rule_meaning` point, no rule
 * qualifies or nothing is checked; a failing encoder returns the `note` to add instead.
 */
export async function encoderRuleMeaning(
  an: RequestAnalysis,
  stage: EncoderStage,
  signal?: AbortSignal,
  read?: readonly Float32Array[],
): Promise<{ scores?: Map<RulePlan, number>; note?: string }> {
  const point = stage.manifest.rule_meaning;
  const mode = modeOf(an, stage);
  const text = an.checkedAn.joined;
  if (!point || mode === 'off' || text.length === 0) return {};
  const plans = an.policy.byMeaning;
  if (plans.length === 0) return {};
  let cache = ruleEmbeddings.get(stage);
  if (!cache) ruleEmbeddings.set(stage, (cache = new WeakMap()));
  const unread = plans.filter((p) => !cache.has(p));
  const missing = unread.slice(0, MAX_NEW_RULE_READS);
  const reuse = read !== undefined && read.length > 0;
  const textItem: EncoderItem = { role: an.parts.phase === 'input' ? 'prompt' : 'response', text };
  try {
    const items: EncoderItem[] = [
      ...(reuse ? [] : [textItem]),
      ...missing.map((p) => ({ role: 'prompt' as const, text: p.description || p.name })),
    ];
    const out = items.length > 0 ? await (await stage.encoder()).encode(items, signal) : [];
    if (out.length !== items.length) throw new Error('encoder answered for fewer texts than asked');
    const own = reuse ? 0 : 1;
    missing.forEach((p, i) => cache.set(p, out[i + own]?.embedding as Float32Array));
    const seen = reuse ? read : [out[0]?.embedding as Float32Array];
    const scores = new Map<RulePlan, number>();
    for (const p of plans) {
      const rule = cache.get(p);
      if (!rule) continue;
      const best = Math.max(...seen.map((e) => cosine(e, rule)));
      scores.set(p, ruleMeaningScore(point, best));
    }
    const later = unread.length - missing.length;
    return later > 0
      ? {
          scores,
          note: `${later} custom rule(s) not yet read by the encoder (at most ${MAX_NEW_RULE_READS} per request): scored by their words this time`,
        }
      : { scores };
  } catch (e) {
    if (signal?.aborted) throw e;
    return {
      note: `rules by meaning unavailable (${e instanceof Error ? e.message : String(e)}): scored by their words`,
    };
  }
}
