/**
 * The encoder in this thread: one onnxruntime session on one intra-op thread, batch 1 per text.
 * onnxruntime-node runs inference synchronously on the calling thread (its `run` only defers to
 * the next turn), so only worker threads use this directly: the scoring threads of the pool, and
 * the encoder threads of encoder-pool.ts for engines that run on the thread serving HTTP.
 */
import path from 'node:path';
import { defaultModelDir, loadTokenizerResources } from '../ml/ml-model.js';
import {
  defaultEncoderDir,
  loadEncoderManifest,
  type Encoder,
  type EncoderItem,
  type EncoderOutput,
} from './encoder.js';
import { encoderIds } from './encoder-input.js';
import { createSession } from './onnx-session.js';

export async function createOnnxEncoder(dir: string = defaultEncoderDir()): Promise<Encoder> {
  const manifest = loadEncoderManifest(dir);
  // The encoder shares the static detectors' WordPiece vocabulary (all-MiniLM-L6-v2's).
  const { tokenizer } = loadTokenizerResources(defaultModelDir());
  const special = { cls: tokenizer.idOf('[CLS]'), sep: tokenizer.idOf('[SEP]') };
  const { ort, session } = await createSession(path.join(dir, manifest.model));
  const heads = manifest.heads.length;

  async function encodeOne(item: EncoderItem): Promise<EncoderOutput> {
    const ids = encoderIds(tokenizer, special, manifest, item);
    const dims = [1, ids.length];
    const inputIds = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), dims);
    const mask = new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), dims);
    const out = await session.run({ input_ids: inputIds, attention_mask: mask });
    const probs = out.probs?.data as Float32Array | undefined;
    const embedding = out.embedding?.data as Float32Array | undefined;
    if (!probs || probs.length !== heads || !embedding)
      throw new Error(
        `encoder model ${manifest.model} does not return probs[${heads}] and embedding`,
      );
    return { probs: Array.from(probs), embedding: Float32Array.from(embedding) };
  }

  return {
    manifest,
    async encode(items, signal) {
      const out: EncoderOutput[] = [];
      for (const item of items) {
        signal?.throwIfAborted();
        out.push(await encodeOne(item));
      }
      return out;
    },
    close: () => session.release(),
  };
}
