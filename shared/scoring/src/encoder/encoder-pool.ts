/**
 * The encoder on its own worker threads, for engines that run on the thread serving HTTP: a
 * 7 ms inference there would hold every other request (onnxruntime-node's `run` is synchronous).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import {
  defaultEncoderDir,
  loadEncoderManifest,
  type Encoder,
  type EncoderItem,
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

export function createEncoderPool(options: { threads: number; dir?: string }): Encoder {
  const dir = options.dir ?? defaultEncoderDir();
  const manifest = loadEncoderManifest(dir);
  const pool = new Piscina<EncoderItem[], EncoderOutput[]>({
    filename: String(WORKER),
    minThreads: options.threads,
    maxThreads: options.threads,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    workerData: { dir },
  });
  const probe = pool as unknown as Piscina<null, true>;
  const allLoaded = Promise.allSettled(
    Array.from({ length: options.threads }, () => probe.run(null, { name: 'loaded' })),
  );
  return {
    manifest,
    encode: (items, signal) => pool.run([...items], signal ? { signal } : {}),
    close: async () => {
      await allLoaded;
      await pool.close();
    },
  };
}
