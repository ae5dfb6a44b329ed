// Shared helpers for the encoder experiment scripts (embed.mjs, time.mjs).
// onnxruntime-node and @huggingface/tokenizers are NOT dependencies of this repository: they are
// resolved from $ENCODER_NODE_MODULES (default: the install fetch.sh makes in the cache);
// see README.md for how that install is made (ONNXRUNTIME_NODE_INSTALL=skip).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CACHE = path.join(ROOT, 'node_modules/.cache/guard-encoder');
const NODE_MODULES =
  process.env.ENCODER_NODE_MODULES ??
  fileURLToPath(
    new URL('../../node_modules/.cache/guard-encoder/npm/node_modules', import.meta.url),
  );
const require = createRequire(path.join(NODE_MODULES, 'noop.js'));
export const ort = require('onnxruntime-node');
const { Tokenizer } = require('@huggingface/tokenizers');

/** A tokenizer.json + tokenizer_config.json folder as a @huggingface/tokenizers Tokenizer. */
export function loadTokenizer(dir) {
  return new Tokenizer(
    JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')),
    JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')),
  );
}

/** An ONNX session on ONE intra-op thread (sequential execution). */
export function loadSession(file) {
  return ort.InferenceSession.create(file, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
}

/** Load tokenizer + ONNX session of an encoder folder. */
export async function loadEncoder(dir = path.join(CACHE, 'me5'), file = 'model.onnx') {
  const tok = loadTokenizer(dir);
  const sess = await loadSession(path.join(dir, file));
  const eos = tok.token_to_id ? tok.token_to_id('</s>') : 2;
  return { tok, sess, eos: eos ?? 2, dim: 384 };
}

/** Token ids of `text` (special tokens included), cut to maxTokens keeping the final </s>. */
export function encodeIds(enc, text, maxTokens) {
  // only the head of a long text can survive truncation; skip tokenising the rest
  const t =
    maxTokens && maxTokens < 512 && text.length > maxTokens * 16
      ? text.slice(0, maxTokens * 16)
      : text;
  let ids = enc.tok.encode(t).ids;
  const full = ids.length;
  if (maxTokens && ids.length > maxTokens)
    ids = ids.slice(0, maxTokens - 1).concat(ids[ids.length - 1]);
  return { ids, truncated: full > ids.length };
}

/** Run one padded batch of id lists; returns Float32Array [n * dim] of L2-normalised embeddings. */
export async function embedBatch(enc, idLists) {
  const n = idLists.length;
  const L = Math.max(...idLists.map((x) => x.length));
  const ids = new BigInt64Array(n * L).fill(1n); // <pad> = 1
  const mask = new BigInt64Array(n * L);
  idLists.forEach((row, r) =>
    row.forEach((v, c) => {
      ids[r * L + c] = BigInt(v);
      mask[r * L + c] = 1n;
    }),
  );
  const out = await enc.sess.run(
    {
      input_ids: new ort.Tensor('int64', ids, [n, L]),
      attention_mask: new ort.Tensor('int64', mask, [n, L]),
    },
    ['sentence_embedding'],
  );
  return out.sentence_embedding.data;
}

/** Deterministic PRNG (mulberry32) seeded from a string. */
export function rng(seedStr) {
  let h = 2166136261;
  for (const ch of seedStr) h = Math.imul(h ^ ch.codePointAt(0), 16777619);
  let a = h >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle(arr, rand) {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [arr[i], arr[j]] = [arr[j], arr[i]];
  }
  return arr;
}
