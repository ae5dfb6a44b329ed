/** The body of an encoder thread (encoder-pool.ts): one session per thread, loaded once. */
import { workerData } from 'node:worker_threads';
import type { EncoderItem, EncoderOutput } from './encoder.js';
import { createOnnxEncoder } from './onnx-encoder.js';

const encoder = createOnnxEncoder((workerData as { dir: string }).dir);

export default async function encode(items: EncoderItem[]): Promise<EncoderOutput[]> {
  return (await encoder).encode(items);
}

/** Answers once the session has loaded (the pool waits for it before closing). */
export async function loaded(): Promise<true> {
  await encoder;
  return true;
}
