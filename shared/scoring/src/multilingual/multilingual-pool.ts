/**
 * The multilingual reader on its own worker threads, for engines on the thread serving HTTP (as
 * encoder-pool.ts does for the English encoder): onnxruntime-node's `run` is synchronous.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLoadedPool } from '../pool/loaded-pool.js';
import { type MultilingualManifest, type MultilingualReader } from './reader.js';

const WORKER = new URL('./multilingual-worker.js', import.meta.url);

/** Whether the compiled worker module is there (not when run from sources under tsx or vitest). */
export function multilingualPoolAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER));
}

export function createMultilingualPool(options: {
  threads: number;
  dir: string;
  manifest: MultilingualManifest;
}): MultilingualReader {
  const { pool, close } = createLoadedPool<string[], Float32Array[]>({
    filename: WORKER,
    threads: options.threads,
    workerData: { dir: options.dir },
  });
  return {
    manifest: options.manifest,
    read: (texts, signal) => pool.run([...texts], signal ? { signal } : {}),
    close,
  };
}
