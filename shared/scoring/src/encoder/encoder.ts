/**
 * The contextual encoder stage: a fine-tuned MiniLM (6 layers, 384 dimensions, int8) that reads a
 * text in context rather than as a bag of token vectors. It answers the jailbreak question where
 * the static detectors are unsure (the cascade, see `routeAbove`) and returns a sentence
 * embedding for callers that compare texts by meaning. Weights: models/encoder/, written by
 * `npm run train:encoder`; numbers in docs/detection-quality.md.
 */
import path from 'node:path';
import { z } from 'zod';
import { HARM_CATEGORIES, type HarmCategory } from '../detectors.js';
import { defaultModelDir, sigmoid } from '../ml/ml-model.js';
import { readManifest } from './onnx-session.js';

/** How a request uses the encoder: never, for the inputs the static model is unsure of, or always. */
export const ENCODER_MODES = ['off', 'cascade', 'all'] as const;
export type EncoderMode = (typeof ENCODER_MODES)[number];

export interface EncoderItem {
  role: 'prompt' | 'response' | 'document';
  text: string;
}

export interface EncoderOutput {
  /** Raw head probabilities of the model (uncalibrated), in `EncoderManifest.heads` order. */
  probs: number[];
  /** Mean-pooled, L2-normalised sentence embedding (384 numbers). */
  embedding: Float32Array;
}

/** Runs the encoder; implementations keep inference off the thread that serves requests. */
export interface Encoder {
  readonly manifest: EncoderManifest;
  encode(items: readonly EncoderItem[], signal?: AbortSignal): Promise<EncoderOutput[]>;
  close(): Promise<void>;
}

export interface EncoderManifest {
  /** ONNX file beside the manifest. */
  model: string;
  heads: string[];
  dims: number;
  /** Tokens kept from a long text: its first `head` and last `tail` (WordPiece, vocab.txt). */
  head_tokens: number;
  tail_tokens: number;
  /**
   * Platt scaling of the jailbreak head on the calibration split, shifted so that the share of
   * benign calibration prompts the static detector's threshold flags maps to the same policy
   * threshold (0.3): `sigmoid(a * logit(p) + b)`.
   */
  jailbreak: { a: number; b: number };
  /**
   * The same scaling for the parts of a long input (windows), whose highest score decides: its
   * offset makes 1% of the parts of long ordinary calibration prompts reach the threshold, the
   * budget of one prompt held per part (a window of several requests scores higher than one).
   * Absent from manifests made before it: `jailbreak` applies.
   */
  jailbreak_parts?: { a: number; b: number };
  /** Cascade: inputs whose static jailbreak score is at least this go to the encoder. */
  route_above: number;
  /**
   * Harm of a prompt read by both models: `sigmoid(static * logit(s) + encoder * logit(e) + b)`,
   * `s` the static detector's overall harm score and `e` the encoder's harm head: a logistic
   * regression on the calibration split, shifted so that 1% of its ordinary benign prompts reach
   * the default violation threshold (0.5). `route_above`: in the cascade, a prompt whose static
   * harm score is at least this is read by the encoder too (the static score of the top 10% of
   * those prompts). Absent from manifests made before it: harm stays with the static detector.
   */
  harm?: { static: number; encoder: number; b: number; route_above: number };
  /**
   * Custom rules by meaning (`ruleMeaningScore`): the cosine of a text's and a rule's embedding
   * scored 0.5 (`at`: 1% of calibration requests reach it with a rule of another topic, any of
   * ten) and 0.3 (`low`: 5% of them). Absent: rules are not scored by meaning.
   */
  rule_meaning?: { at: number; low: number };
  /**
   * Harm categories by meaning: one description per category (`topics`), and the cosine `at` from
   * which a request read for harm is said to speak of its nearest one (`nearestHarmTopic`), as
   * when it uses the category's words (harm-cues.ts), if that category is one of `lends` (absent:
   * every category described). `at`: the lowest cosine (steps of 0.005) at which the preset's
   * verdicts flag at most 0.2% more of the calibration split's benign prompts
   * (calibrate-harm-topics.ts). Absent: categories are read by their words only.
   */
  harm_topics?: {
    at: number;
    topics: Partial<Record<HarmCategory, string>>;
    lends?: HarmCategory[];
  };
  /**
   * Rules about harm in general ("no harmful or illegal requests", router/rule-router.ts): the
   * overall harm score at which such a rule scores 0.5 (`generalHarmScore`). `at`: the lowest
   * (steps of 0.005) at which the preset with such a rule flags at most 0.2% more of the
   * calibration split's benign prompts than with its category rules alone
   * (calibrate-harm-topics.ts). Absent: such a rule reads the overall score as it is.
   */
  harm_general?: { at: number };
  /**
   * Harm of a long input (one read in windows) read sentence by sentence: the sentences the static
   * detector finds most harmful are each read by both models (`calibratedSentenceHarm`), with the
   * `harm` blend at this offset instead of its own, so that 1% of the sentences read of long benign
   * calibration prompts reach the default violation threshold 0.5, as each window of such prompts
   * is held for jailbreaks (`jailbreak_parts`; calibrate-harm-parts.ts). The highest sentence can
   * only raise the request's harm. Absent: a long input keeps the static detector's harm.
   */
  harm_parts?: { b: number };
  /**
   * Indirect prompt injection in third-party content (tool results, documents): Platt scaling of
   * the injection head's highest logit over the windows a document is read in
   * (`sigmoid(a * logit(p) + b)`), shifted so that 1% of the calibration split's benign documents
   * reach the default ipi threshold 0.5. `route_above`: in the cascade, a document whose static
   * injection score is at least this is read (the score 99% of the calibration split's injected
   * documents reach). Written by calibrate-documents.ts. Absent: documents stay with the static
   * detector.
   */
  indirect?: { a: number; b: number; route_above: number };
  /**
   * A document too long for MAX_WINDOWS windows but read whole, in up to MAX_DOCUMENT_WINDOWS
   * (apply-documents.ts): the same slope as `indirect` with an offset of its own, set so that 1% of
   * the calibration split's long benign texts (its benign documents joined) reach 0.5, as each
   * short document is held (calibrate-documents.ts). The highest of many windows runs higher than
   * that of a few, so the point of short documents would flag long clean ones far more often.
   * Absent: a long document is read by its opening and end, the static score kept when higher.
   */
  indirect_long?: { b: number };
  /**
   * How far a model output goes along with the request it answers, read by both models:
   * `sigmoid(static * logit(s) + encoder * logit(e) + b)`, `s` the static detector's compliance
   * (`Detectors.compliance`) and `e` the encoder's comply head on the answer: a logistic
   * regression on the calibration split's answers to harmful requests, shifted so that 5% of its
   * real refusals reach 0.5, as the static head's point is set (calibrate-answers.ts). `meaning`:
   * the weight of `comply_meaning`'s logit in the same sum, when the manifest has that head.
   * Absent: compliance stays with the static detector.
   */
  comply?: { static: number; encoder: number; meaning?: number; b: number };
  /**
   * Compliance by meaning: a logistic head on the answer's embedding (`w`, `dims` long, and `b`),
   * read from the same encoder read as the comply head (train-comply-meaning.ts). Its logit
   * enters `comply` with the weight `comply.meaning`; it has no point of its own.
   */
  comply_meaning?: { w: number[]; b: number };
  /**
   * Harm of a model output on its own text, read by both models: `sigmoid(static * logit(s) +
   * encoder * logit(e) + b)`, `s` the static detector's overall harm of the answer (response role)
   * and `e` the encoder's harm head on the answer read as a response (the read the comply head
   * uses): a logistic regression on the calibration split's answers with a harm target, shifted
   * so that 1% of its benign answers (of sources in the budgets) reach 0.5
   * (calibrate-answer-harm.ts). `route_above`: in the cascade, an answer whose static harm is at
   * least this is read for it. Absent: an answer's own harm stays with the static detector.
   */
  answer_harm?: { static: number; encoder: number; b: number; route_above: number };
  /** How the manifest was made (for the docs): rows, seconds, shares. */
  provenance?: Record<string, unknown>;
}

export function defaultEncoderDir(): string {
  return path.join(defaultModelDir(), 'encoder');
}

const platt = z.object({ a: z.number(), b: z.number() });
const category = z.enum(HARM_CATEGORIES);
/** A score read by both models, and the static score from which the cascade reads it. */
const blendPoint = z.object({
  static: z.number(),
  encoder: z.number(),
  b: z.number(),
  route_above: z.number(),
});
/** The shape of `encoder.json`; fields it does not know are kept. */
const manifestSchema: z.ZodType<EncoderManifest> = z
  .looseObject({
    model: z.string().min(1),
    heads: z.array(z.string()),
    dims: z.int().positive(),
    head_tokens: z.int().positive(),
    tail_tokens: z.int().nonnegative(),
    jailbreak: platt,
    jailbreak_parts: platt.optional(),
    route_above: z.number(),
    harm: blendPoint.optional(),
    rule_meaning: z.object({ at: z.number(), low: z.number() }).optional(),
    harm_topics: z
      .object({
        at: z.number(),
        topics: z.partialRecord(category, z.string()),
        lends: z.array(category).optional(),
      })
      .optional(),
    harm_general: z.object({ at: z.number().gt(0).lt(1) }).optional(),
    harm_parts: z.object({ b: z.number() }).optional(),
    indirect: z.object({ a: z.number(), b: z.number(), route_above: z.number() }).optional(),
    indirect_long: z.object({ b: z.number() }).optional(),
    comply: z
      .object({
        static: z.number(),
        encoder: z.number(),
        meaning: z.number().optional(),
        b: z.number(),
      })
      .optional(),
    comply_meaning: z.object({ w: z.array(z.number()), b: z.number() }).optional(),
    answer_harm: blendPoint.optional(),
    provenance: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((m, ctx) => {
    // The offset replaces the harm point's own: it means nothing without the point's weights.
    if (m.harm_parts && !m.harm)
      ctx.addIssue({
        code: 'custom',
        path: ['harm_parts'],
        message: 'an offset for the harm of sentences, without the harm point it shifts',
      });
    if (m.comply_meaning && m.comply_meaning.w.length !== m.dims)
      ctx.addIssue({
        code: 'custom',
        path: ['comply_meaning', 'w'],
        message: `${m.comply_meaning.w.length} weights for an embedding of ${m.dims} (dims)`,
      });
    // The offset of `comply` was fitted with the head's logit in the sum: without the head the
    // blend would be off its point, not merely short of one reader.
    if (m.comply?.meaning !== undefined && !m.comply_meaning)
      ctx.addIssue({
        code: 'custom',
        path: ['comply', 'meaning'],
        message: 'a weight for comply_meaning, which the manifest does not have',
      });
  });

/**
 * The manifest in `dir`, checked: a file of another shape is an error here, when the engine is
 * made, rather than an encoder that fails on every request it reads.
 */
export function loadEncoderManifest(dir: string = defaultEncoderDir()): EncoderManifest {
  return readManifest(path.join(dir, 'encoder.json'), manifestSchema, 'an encoder manifest');
}

/**
 * The logit of a linear head on an embedding, `w · e + b` (the multilingual reader's harm head, the
 * encoder's compliance by meaning).
 */
export function linearLogit(head: { w: readonly number[]; b: number }, e: Float32Array): number {
  let z = head.b;
  for (let k = 0; k < head.w.length; k++) z += (head.w[k] as number) * (e[k] as number);
  return z;
}

/** Log-odds of a probability, kept finite. */
export const logit = (p: number): number => {
  const q = Math.min(1 - 1e-7, Math.max(1e-7, p));
  return Math.log(q / (1 - q));
};

/**
 * The encoder's calibrated jailbreak score, on the same scale as the static detector's; `part`:
 * of one part of a long input read in parts (`jailbreak_parts`).
 */
export function calibratedJailbreak(
  manifest: EncoderManifest,
  out: EncoderOutput,
  part = false,
): number {
  const k = manifest.heads.indexOf('jailbreak');
  const { a, b } = (part && manifest.jailbreak_parts) || manifest.jailbreak;
  return sigmoid(a * logit(out.probs[k] ?? 0) + b);
}

/**
 * The harm of a prompt from the static detector's overall score and the encoder's harm head on
 * what it read of the prompt (`outs`: the highest counts), on the policy's scale (`harm` in the
 * manifest); null when the manifest has no harm point or nothing was read.
 */
export function calibratedHarm(
  manifest: EncoderManifest,
  staticScore: number,
  outs: readonly EncoderOutput[],
): number | null {
  return readByBoth(manifest.harm, staticScore, highestLogit(manifest, 'harm', outs));
}

/**
 * The harm of a model output on its own text from the static detector's overall score of it and
 * the encoder's harm head on the answer read as a response (`answer_harm` in the manifest); null
 * when the manifest has no such point.
 */
export function calibratedAnswerHarm(
  manifest: EncoderManifest,
  staticScore: number,
  out: EncoderOutput,
): number | null {
  return readByBoth(manifest.answer_harm, staticScore, highestLogit(manifest, 'harm', [out]));
}

/**
 * The harm of one sentence of a long input (`harm_parts`) from the static detector's overall score
 * of that sentence and the encoder's harm head on it; null when the manifest has no such offset.
 */
export function calibratedSentenceHarm(
  manifest: EncoderManifest,
  staticScore: number,
  out: EncoderOutput,
): number | null {
  const z = sentenceHarmLogit(manifest, staticScore, out);
  return manifest.harm_parts && z !== null ? sigmoid(z + manifest.harm_parts.b) : null;
}

/**
 * `calibratedSentenceHarm` before its offset: the `harm` blend's weighted logits of a sentence,
 * without the blend's own offset (what calibrate-harm-parts.ts fits the offset on); null without a
 * harm point or a harm head.
 */
export function sentenceHarmLogit(
  manifest: EncoderManifest,
  staticScore: number,
  out: EncoderOutput,
): number | null {
  return blendLogit(
    manifest.harm && { ...manifest.harm, b: 0 },
    staticScore,
    highestLogit(manifest, 'harm', [out]),
  );
}

/**
 * How far an answer goes along with its request, from the static detector's compliance, the
 * encoder's comply head on the answer and, when the manifest has it, the compliance head on the
 * answer's embedding (`comply` and `comply_meaning` in the manifest); null when the manifest has
 * no such point, has a weight for the head but not the head, or nothing was read.
 */
export function calibratedCompliance(
  manifest: EncoderManifest,
  staticScore: number,
  out: EncoderOutput | undefined,
): number | null {
  const point = manifest.comply;
  const meaning = out && point?.meaning !== undefined ? complyMeaningLogit(manifest, out) : null;
  // A weight without its head (a manifest not loaded through the schema): no blend at all.
  if (out && point?.meaning !== undefined && meaning === null) return null;
  return readByBoth(
    point,
    staticScore,
    highestLogit(manifest, 'comply', out ? [out] : []),
    meaning === null ? 0 : (point?.meaning ?? 0) * meaning,
  );
}

/** The logit of the compliance head on an answer's embedding (`comply_meaning`); null without it. */
export function complyMeaningLogit(manifest: EncoderManifest, out: EncoderOutput): number | null {
  const head = manifest.comply_meaning;
  return head ? linearLogit(head, out.embedding) : null;
}

/**
 * A score read by both models, `sigmoid(static * logit(staticScore) + encoder * z + b + more)`
 * (`harm` and `comply` in the manifest; `more`: the weighted logit of a further head); null
 * without the point or an encoder logit `z`.
 */
function readByBoth(
  point: { static: number; encoder: number; b: number } | undefined,
  staticScore: number,
  z: number | null,
  more = 0,
): number | null {
  const linear = blendLogit(point, staticScore, z);
  return linear !== null ? sigmoid(linear + more) : null;
}

/** `readByBoth` before the sigmoid (and without `more`). */
function blendLogit(
  point: { static: number; encoder: number; b: number } | undefined,
  staticScore: number,
  z: number | null,
): number | null {
  return point && z !== null
    ? point.static * logit(staticScore) + point.encoder * z + point.b
    : null;
}

/** The highest logit of the head `head` over what was read (`outs`); null without either. */
function highestLogit(
  manifest: EncoderManifest,
  head: string,
  outs: readonly EncoderOutput[],
): number | null {
  const k = manifest.heads.indexOf(head);
  if (k < 0 || outs.length === 0) return null;
  return Math.max(...outs.map((o) => logit(o.probs[k] ?? 0)));
}

/**
 * A third-party text's indirect-injection score from the encoder's injection head on the windows
 * it was read in (`outs`: the highest counts), on the policy's ipi scale (`indirect` in the
 * manifest; `long`: a long document read whole, at `indirect_long`'s offset); null when the
 * manifest has no such point or nothing was read.
 */
export function calibratedIndirect(
  manifest: EncoderManifest,
  outs: readonly EncoderOutput[],
  long = false,
): number | null {
  const z = highestLogit(manifest, 'injection', outs);
  const p = manifest.indirect;
  if (!p || z === null) return null;
  const b = long && manifest.indirect_long ? manifest.indirect_long.b : p.b;
  return sigmoid(p.a * z + b);
}

const LOGIT_03 = Math.log(0.3 / 0.7);

/**
 * A custom rule's score from the cosine similarity of the text's and the rule's embeddings: 0.5
 * at `rule_meaning.at`, 0.3 at `rule_meaning.low`, logistic in between and beyond.
 */
export function ruleMeaningScore(point: { at: number; low: number }, cosine: number): number {
  return sigmoid(((cosine - point.at) / Math.max(1e-6, point.at - point.low)) * -LOGIT_03);
}

/** A harm category a text speaks of by meaning, and how near its description the text is. */
export interface HarmTopic {
  category: HarmCategory;
  cosine: number;
}

/** A harm category's description, as the encoder embeds it (`embedHarmTopics`). */
export interface EmbeddedHarmTopic {
  category: HarmCategory;
  embedding: Float32Array;
}

/** The manifest's category descriptions (`harm_topics.topics`), in the order of HARM_CATEGORIES. */
function topicEntries(topics: Partial<Record<HarmCategory, string>>): [HarmCategory, string][] {
  return HARM_CATEGORIES.flatMap((c) =>
    topics[c] ? [[c, topics[c]] as [HarmCategory, string]] : [],
  );
}

/** The category descriptions embedded by the encoder, as texts it reads (`prompt`). */
export async function embedHarmTopics(
  encoder: Encoder,
  topics: Partial<Record<HarmCategory, string>>,
  signal?: AbortSignal,
): Promise<EmbeddedHarmTopic[]> {
  const entries = topicEntries(topics);
  const out = await encoder.encode(
    entries.map(([, text]) => ({ role: 'prompt' as const, text })),
    signal,
  );
  if (out.length !== entries.length) throw new Error('encoder answered for fewer texts than asked');
  return entries.map(([category], i) => ({
    category,
    embedding: out[i]?.embedding as Float32Array,
  }));
}

/**
 * The category whose description (`topics`, embedded) is nearest the text's embedding, when that
 * cosine reaches `at`; null otherwise (or with no topics).
 */
export function nearestHarmTopic(
  embedding: Float32Array,
  topics: readonly EmbeddedHarmTopic[],
  at: number,
): HarmTopic | null {
  let best: HarmTopic | null = null;
  for (const t of topics) {
    const c = cosine(embedding, t.embedding);
    if (!best || c > best.cosine) best = { category: t.category, cosine: c };
  }
  return best && best.cosine >= at ? best : null;
}

/** Cosine similarity of two L2-normalised embeddings. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}
