/**
 * The shipped detector network, read from shared/scoring/models/ (written by `npm run train`).
 *
 * Per segment and head h:
 *   z_h = [h has a sparse part] sparseScale_h * sum_i W_sparse[bucket_i, h] / sqrt(#buckets)
 *       + (W2 relu(W1 x + b1) + b2)_h
 * where x = [mean static token vector, hand features, role] (`denseFeatures`). Serving never
 * builds x: the embedding block of W1 is pre-multiplied into the token table ("proj", one
 * K-vector per vocabulary entry), so W1 x = mean of proj rows + W1_rest x_rest. Input
 * standardisation is folded into those weights at export.
 * A text's logit is the maximum over its segments; a per-head Platt scaling turns it into a
 * calibrated probability.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { TextRole } from '../detectors.js';
import {
  BucketBuffer,
  CHAR_CLASSES,
  HASH_BITS,
  REST_FEATURES,
  TokenBuffer,
  buildTokenKinds,
  segmentStats,
  segmentText,
  sparseFeatures,
  type EmbeddingTable,
  type TokenResources,
  type TextSegment,
} from './features.js';
import { WordPieceTokenizer } from './wordpiece.js';

export const MODEL_FORMAT = 2;

interface ArrayRef {
  offset: number;
  length: number;
  dtype: 'int8' | 'float32';
}

export interface ModelManifest {
  format: number;
  heads: string[];
  hashBits: number;
  denseDim: number;
  hidden: number;
  /** Heads that have a hashed n-gram part, in the column order of `arrays.sparse`. */
  sparseHeads: number[];
  /** Dequantisation scale of each sparse column. */
  sparseScale: number[];
  vocabSize: number;
  calibration: { a: number[]; b: number[] };
  thresholds: number[];
  /** Per-role Platt scaling and thresholds (documents are max-pooled over many segments). */
  calibrationByRole?: Partial<Record<TextRole, { a: number[]; b: number[]; thresholds: number[] }>>;
  arrays: {
    sparse: ArrayRef;
    proj: ArrayRef;
    projScale: ArrayRef;
    w1rest: ArrayRef;
    b1: ArrayRef;
    w2: ArrayRef;
    b2: ArrayRef;
    charLm: ArrayRef;
  };
  trainedAt?: string;
  variant?: string;
}

export interface SegmentScores {
  segments: TextSegment[];
  /** Raw logits, `segments.length x heads`. */
  logits: Float32Array;
  /** Calibrated probability of the text per head (max over segments, then Platt scaling). */
  probs: Float32Array;
}

/** Default location of the committed weights: shared/scoring/models (same from src/ml and dist/ml). */
export function defaultModelDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../models');
}

export function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

export class MlModel {
  readonly manifest: ModelManifest;
  readonly heads: readonly string[];
  readonly resources: TokenResources;
  private readonly sparse: Int8Array;
  private readonly sparseHeads: Int32Array;
  private readonly proj: Int8Array;
  private readonly projScale: Float32Array;
  private readonly w1rest: Float32Array;
  private readonly b1: Float32Array;
  private readonly w2: Float32Array;
  private readonly b2: Float32Array;
  private readonly buckets = new BucketBuffer();
  private readonly tokens = new TokenBuffer();
  private readonly rest = new Float32Array(REST_FEATURES);
  private readonly hiddenBuf: Float32Array;
  private readonly projAcc: Float64Array;
  private readonly acc: Float64Array;

  constructor(
    manifest: ModelManifest,
    weights: Uint8Array,
    resources: Omit<TokenResources, 'charLm'>,
  ) {
    if (manifest.format !== MODEL_FORMAT)
      throw new Error(`unsupported detector model format ${manifest.format}`);
    if (manifest.hashBits !== HASH_BITS)
      throw new Error('detector model hash size does not match featuriser');
    const view = (ref: ArrayRef): Int8Array | Float32Array => {
      const bytes = weights.slice(
        ref.offset,
        ref.offset + ref.length * (ref.dtype === 'int8' ? 1 : 4),
      );
      return ref.dtype === 'int8' ? new Int8Array(bytes.buffer) : new Float32Array(bytes.buffer);
    };
    this.manifest = manifest;
    this.heads = manifest.heads;
    this.sparse = view(manifest.arrays.sparse) as Int8Array;
    this.sparseHeads = Int32Array.from(manifest.sparseHeads);
    this.proj = view(manifest.arrays.proj) as Int8Array;
    this.projScale = view(manifest.arrays.projScale) as Float32Array;
    this.w1rest = view(manifest.arrays.w1rest) as Float32Array;
    this.b1 = view(manifest.arrays.b1) as Float32Array;
    this.w2 = view(manifest.arrays.w2) as Float32Array;
    this.b2 = view(manifest.arrays.b2) as Float32Array;
    const charLm = view(manifest.arrays.charLm) as Float32Array;
    if (charLm.length !== CHAR_CLASSES * CHAR_CLASSES)
      throw new Error('detector model char LM has the wrong size');
    this.resources = { ...resources, charLm };
    const K = manifest.hidden;
    if (this.proj.length !== manifest.vocabSize * K || this.w1rest.length !== K * REST_FEATURES)
      throw new Error('detector model layer sizes do not match featuriser');
    if (resources.tokenKinds.length !== manifest.vocabSize)
      throw new Error('detector model does not match vocab.txt');
    this.hiddenBuf = new Float32Array(K);
    this.projAcc = new Float64Array(K);
    this.acc = new Float64Array(this.sparseHeads.length);
  }

  /** Loads the committed model synchronously (a few MB; done once at startup). */
  static load(dir: string = defaultModelDir()): MlModel {
    const manifest = JSON.parse(
      readFileSync(path.join(dir, 'detectors.json'), 'utf8'),
    ) as ModelManifest;
    const weights = new Uint8Array(readFileSync(path.join(dir, 'detectors.bin')));
    return new MlModel(manifest, weights, loadTokenizerResources(dir));
  }

  headIndex(name: string): number {
    const i = this.heads.indexOf(name);
    if (i < 0) throw new Error(`detector model has no head ${name}`);
    return i;
  }

  /** Raw per-segment logits for one segment of text (exposed for parity tests and training). */
  segmentLogits(segment: string, role: TextRole, out: Float32Array, outOffset = 0): void {
    // Hot path: indices below are in range by construction (bucket < 2^hashBits, token < vocab,
    // k < K, h < H), hence non-null assertions rather than `?? 0` in the inner loops.
    const H = this.heads.length;
    const K = this.hiddenBuf.length;
    const S = this.sparseHeads.length;
    const acc = this.acc;
    acc.fill(0);
    let norm = 0;
    if (S > 0) {
      const buckets = this.buckets;
      buckets.length = 0;
      sparseFeatures(segment, buckets);
      const sp = this.sparse;
      const ids = buckets.data;
      if (S === 1) {
        let a = 0;
        for (let i = 0; i < buckets.length; i++) a += sp[ids[i]!]!;
        acc[0] = a;
      } else {
        for (let i = 0; i < buckets.length; i++) {
          const base = ids[i]! * S;
          for (let j = 0; j < S; j++) acc[j]! += sp[base + j]!;
        }
      }
      norm = buckets.length > 0 ? 1 / Math.sqrt(buckets.length) : 0;
    }

    const tokens = this.tokens;
    const rest = this.rest;
    segmentStats(segment, role, this.resources, tokens, rest);
    const pa = this.projAcc;
    pa.fill(0);
    const proj = this.proj;
    const ps = this.projScale;
    for (let i = 0; i < tokens.length; i++) {
      const id = tokens.data[i]!;
      const sc = ps[id]!;
      const base = id * K;
      for (let k = 0; k < K; k++) pa[k]! += proj[base + k]! * sc;
    }
    const invN = tokens.length > 0 ? 1 / tokens.length : 0;
    const hid = this.hiddenBuf;
    const w1 = this.w1rest;
    const b1 = this.b1;
    for (let k = 0; k < K; k++) {
      let s = b1[k]! + pa[k]! * invN;
      const base = k * REST_FEATURES;
      for (let d = 0; d < REST_FEATURES; d++) s += w1[base + d]! * rest[d]!;
      hid[k] = s > 0 ? s : 0;
    }
    const w2 = this.w2;
    for (let h = 0; h < H; h++) {
      let s = this.b2[h]!;
      const base = h * K;
      for (let k = 0; k < K; k++) s += w2[base + k]! * hid[k]!;
      out[outOffset + h] = s;
    }
    const scale = this.manifest.sparseScale;
    for (let j = 0; j < S; j++)
      out[outOffset + this.sparseHeads[j]!]! += acc[j]! * norm * scale[j]!;
  }

  score(text: string, role: TextRole): SegmentScores {
    const H = this.heads.length;
    const segments = segmentText(text);
    const logits = new Float32Array(segments.length * H);
    const best = new Float32Array(H).fill(-Infinity);
    segments.forEach((seg, i) => {
      this.segmentLogits(text.slice(seg.start, seg.end), role, logits, i * H);
      for (let h = 0; h < H; h++)
        best[h] = Math.max(best[h] ?? -Infinity, logits[i * H + h] ?? -Infinity);
    });
    const probs = new Float32Array(H);
    for (let h = 0; h < H; h++) probs[h] = this.calibrate(h, best[h] ?? 0, role);
    return { segments, logits, probs };
  }

  calibrate(head: number, logit: number, role: TextRole = 'prompt'): number {
    const c = this.manifest.calibrationByRole?.[role] ?? this.manifest.calibration;
    const a = c.a[head] ?? 1;
    const b = c.b[head] ?? 0;
    return sigmoid(a * logit + b);
  }

  /** Shipped operating threshold of a head for a role (calibrated probability). */
  threshold(head: number, role: TextRole = 'prompt'): number {
    const t = this.manifest.calibrationByRole?.[role]?.thresholds ?? this.manifest.thresholds;
    return t[head] ?? 0.5;
  }
}

function readVocab(dir: string): string[] {
  const vocab = readFileSync(path.join(dir, 'vocab.txt'), 'utf8').split('\n');
  if (vocab[vocab.length - 1] === '') vocab.pop();
  return vocab;
}

const tokenizerResources = new Map<string, Omit<TokenResources, 'charLm'>>();

/**
 * Vocabulary of the WordPiece tokenizer (serving needs only this and detectors.*), read once per
 * directory and thread: the static detectors, the encoder and the encoder stage's token counts
 * share one tokenizer and its word cache.
 */
export function loadTokenizerResources(
  dir: string = defaultModelDir(),
): Omit<TokenResources, 'charLm'> {
  const key = path.resolve(dir);
  let res = tokenizerResources.get(key);
  if (!res) {
    const vocab = readVocab(key);
    res = { tokenizer: new WordPieceTokenizer(vocab), tokenKinds: buildTokenKinds(vocab) };
    tokenizerResources.set(key, res);
  }
  return res;
}

/**
 * Counts WordPiece tokens in the vocabulary of `dir` (the encoder stage's window sizes), binding
 * the shared tokenizer on first use: the loader resolves its directory on every call (~1.6 µs),
 * and a long input is counted segment by segment.
 */
export function wordPieceCounter(dir: string = defaultModelDir()): (text: string) => number {
  let tokenizer: WordPieceTokenizer | undefined;
  return (text) => (tokenizer ??= loadTokenizerResources(dir).tokenizer).encode(text).length;
}

/** The static embedding table written by scripts/train/distill_embeddings.py (training only). */
export function loadEmbeddingTable(dir: string = defaultModelDir()): EmbeddingTable {
  const vocabSize = readVocab(dir).length;
  const meta = JSON.parse(readFileSync(path.join(dir, 'static-embeddings.json'), 'utf8')) as {
    dims: number;
    vocab_size: number;
  };
  if (meta.vocab_size !== vocabSize)
    throw new Error('static embedding table does not match vocab.txt');
  const raw = readFileSync(path.join(dir, 'static-embeddings.bin'));
  const bytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength).slice();
  const scales = new Float32Array(bytes.buffer, 0, vocabSize);
  const rows = new Int8Array(bytes.buffer, vocabSize * 4, vocabSize * meta.dims);
  return { dims: meta.dims, scales, rows };
}
