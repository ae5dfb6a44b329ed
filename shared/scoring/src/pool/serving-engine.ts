import {
  createDefaultEngine,
  encoderCacheBuffer,
  multilingualCacheBuffer,
  type DefaultEngineOptions,
} from '../default-engine.js';
import type { EncoderMode } from '../encoder/encoder.js';
import type { ScoreEngine } from '../engine-types.js';
import { withDeadline } from './deadline-engine.js';
import { createSizeRoutedEngine } from './size-routed-engine.js';
import { createThreadPoolEngine } from './thread-pool-engine.js';

export interface ServingEngineOptions {
  /** Scoring threads; 0 scores on the calling thread (the deadline then only stops waiting). */
  threads: number;
  /** A call still running after this rejects with ScoreDeadlineError. */
  timeoutMs: number;
  /** Requests up to this many characters score on the calling thread; 0 sends all to the threads. */
  inlineChars: number;
  /** The judge model for `hybrid`/`thinking`, or null: local detectors only. */
  judge?: {
    baseUrl: string;
    model: string;
    apiKey?: string | undefined;
    timeoutMs: number;
  } | null;
  /**
   * The jailbreak encoder stage (default: cascade, one encoder thread for the calling thread, the
   * default cache, one table shared by the calling thread's engine and every scoring thread's).
   */
  encoder?: { mode: EncoderMode; threads: number; cache?: number; multilingual?: boolean };
}

export interface ServingEngine {
  engine: ScoreEngine;
  /** Stops the scoring threads, after the calls in progress. */
  close: () => Promise<void>;
}

/**
 * The scoring core as a process serves it, wherever the requests come from (HTTP in the embedded
 * server, Redis in a scorer pod): on worker threads, where the deadline really stops a call,
 * with short requests kept on the calling thread (cheaper than the hop), or all on the calling
 * thread with 0 threads.
 */
export function createServingEngine(options: ServingEngineOptions): ServingEngine {
  const j = options.judge;
  // One table for the encoder's cache and one for the multilingual reader's, shared by this
  // thread's engine and the scoring threads' (a SharedArrayBuffer is shared with the threads, not
  // copied): a text one of them read is not read again by another.
  const cacheBuffer = encoderCacheBuffer(options.encoder?.cache);
  const readerBuffer = multilingualCacheBuffer(options.encoder?.cache);
  const encoder =
    cacheBuffer || readerBuffer
      ? {
          ...(options.encoder ?? { mode: 'cascade' as const }),
          ...(cacheBuffer ? { cacheBuffer } : {}),
          ...(readerBuffer ? { multilingualCacheBuffer: readerBuffer } : {}),
        }
      : options.encoder;
  // Plain data (and the shared table): copied to the threads, which build their own engine from it.
  const engineOptions: DefaultEngineOptions = {
    ...(j
      ? {
          judge: {
            baseUrl: j.baseUrl,
            model: j.model,
            timeoutMs: j.timeoutMs,
            ...(j.apiKey ? { apiKey: j.apiKey } : {}),
          },
        }
      : {}),
    ...(encoder ? { encoder } : {}),
  };
  const inlineEngine = createDefaultEngine(engineOptions);
  const inline = withDeadline(inlineEngine, options.timeoutMs);
  if (options.threads === 0) return { engine: inline, close: inlineEngine.close };
  const pool = createThreadPoolEngine({
    threads: options.threads,
    timeoutMs: options.timeoutMs,
    engine: engineOptions,
  });
  return {
    engine:
      options.inlineChars > 0
        ? createSizeRoutedEngine({ inline, pool, inlineChars: options.inlineChars })
        : pool,
    close: async () => {
      await pool.close();
      await inlineEngine.close();
    },
  };
}
