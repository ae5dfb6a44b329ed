/**
 * The encoder on its own worker threads, for engines that run on the thread serving HTTP: a
 * 7 ms inference there would hold every other request (onnxruntime-node's `run` is synchronous).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLoadedPool } from '../pool/loaded-pool.js';
import {
  defaultEncoderDir,
  loadEncoderManifest,
  type Encoder,
  type EncoderItem,
  type EncoderManifest,
  type EncoderOutput,
} from './encoder.js';

const WORKER = new URL('./encoder-worker.js', import.meta.url);

/**
 * Whether the compiled worker module is there: run from sources (tsx, vitest) it is not, and the
 * caller runs the encoder on its own thread instead.
 */
export function encoderPoolAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER));
}

export function createEncoderPool(options: {
  threads: number;
  dir?: string;
  /** The manifest in `dir`, when the caller has read it already. */
  manifest?: EncoderManifest;
}): Encoder {
  const dir = options.dir ?? defaultEncoderDir();
  const { pool, close } = createLoadedPool<EncoderItem[], EncoderOutput[]>({
    filename: WORKER,
    threads: options.threads,
    workerData: { dir },
  });
  return {
    manifest: options.manifest ?? loadEncoderManifest(dir),
    encode: (items, signal) => pool.run([...items], signal ? { signal } : {}),
    close,
  };
}
