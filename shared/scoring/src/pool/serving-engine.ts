import {
  createDefaultEngine,
  encoderCacheTable,
  multilingualCacheTable,
  type DefaultEngineOptions,
} from '../default-engine.js';
import type { EncoderMode } from '../encoder/encoder.js';
import type { ScoreEngine } from '../engine-types.js';
import type { TableStats } from '../encoder/shared-output-table.js';
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
  /**
   * What the encoder's and the multilingual reader's caches answered, over every thread of this
   * process (null: that cache is off or its model is not there).
   */
  cacheStats: () => { encoder: TableStats | null; multilingual: TableStats | null };
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
  const encoderTable = encoderCacheTable(options.encoder?.cache);
  const readerTable = multilingualCacheTable(options.encoder?.cache);
  const encoder =
    encoderTable || readerTable
      ? {
          ...(options.encoder ?? { mode: 'cascade' as const }),
          ...(encoderTable ? { cacheBuffer: encoderTable.buffer } : {}),
          ...(readerTable ? { multilingualCacheBuffer: readerTable.buffer } : {}),
        }
      : options.encoder;
  const cacheStats = () => ({
    encoder: encoderTable?.stats() ?? null,
    multilingual: readerTable?.stats() ?? null,
  });
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
  if (options.threads === 0) return { engine: inline, close: inlineEngine.close, cacheStats };
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
    cacheStats,
  };
}

/** Where `meterCaches` registers: GuardMetrics of @guard/platform has these. */
export interface CacheMeters {
  counterFrom(name: string, help: string, read: () => number): void;
  gaugeFrom(name: string, help: string, read: () => number): void;
}

/**
 * The caches' counters on a process's metrics, read when scraped (docs/metrics.md): hits and
 * reads of the encoder and of the multilingual reader, over every thread, and the encoder table's
 * slots in use. Zero while a cache is off.
 */
export function meterCaches(metrics: CacheMeters, stats: ServingEngine['cacheStats']): void {
  for (const model of ['encoder', 'multilingual'] as const) {
    const of = () => stats()[model];
    metrics.counterFrom(
      `guard_${model}_cache_hits_total`,
      `Texts the ${model === 'encoder' ? 'encoder' : 'multilingual reader'} was not asked to read: found in its cache (GUARD_ENCODER_CACHE).`,
      () => of()?.hits ?? 0,
    );
    metrics.counterFrom(
      `guard_${model}_cache_reads_total`,
      `Texts the ${model === 'encoder' ? 'encoder' : 'multilingual reader'} read through its cache (not found there); 0 while the cache is off.`,
      () => of()?.reads ?? 0,
    );
  }
  metrics.gaugeFrom(
    'guard_encoder_cache_entries',
    "Slots of the encoder's cache holding an output (of GUARD_ENCODER_CACHE).",
    () => stats().encoder?.entries ?? 0,
  );
}
