/** The body of a multilingual reader thread (multilingual-pool.ts): one session per thread. */
import { workerData } from 'node:worker_threads';
import { createOnnxMultilingualReader } from './reader.js';

const reader = createOnnxMultilingualReader((workerData as { dir: string }).dir);

export default async function read(texts: string[]): Promise<Float32Array[]> {
  return (await reader).read(texts);
}

/** Answers once the session has loaded (the pool waits for it before closing). */
export async function loaded(): Promise<true> {
  await reader;
  return true;
}
