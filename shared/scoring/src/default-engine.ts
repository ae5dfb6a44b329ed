/**
 * The engine with the learned detectors from `ml/` (weights under shared/scoring/models) and the
 * jailbreak encoder stage (models/encoder). What the monitor endpoint and the scorer pods use
 * unless they bring their own detectors.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import {
  createLocalEngine,
  type LocalEngine,
  type LocalEngineOptions,
} from './engine/local-engine.js';
import type { EncoderStage } from './engine/apply-encoder.js';
import {
  defaultEncoderDir,
  loadEncoderManifest,
  type Encoder,
  type EncoderMode,
} from './encoder/encoder.js';
import { createEncoderPool, encoderPoolAvailable } from './encoder/encoder-pool.js';
import { createOnnxEncoder } from './encoder/onnx-encoder.js';
import {
  cachedEncoder,
  type CachedEncoder,
  type EncoderCacheStats,
} from './encoder/cached-encoder.js';
import { cachedReader, readerShape } from './multilingual/cached-reader.js';
import { SharedOutputTable } from './encoder/shared-output-table.js';
import { createMlDetectors } from './ml/index.js';
import { wordPieceCounter } from './ml/ml-model.js';
import type { MultilingualStage } from './engine/apply-multilingual.js';
import { englishGate } from './multilingual/gate.js';
import {
  createMultilingualPool,
  multilingualPoolAvailable,
} from './multilingual/multilingual-pool.js';
import {
  createOnnxMultilingualReader,
  defaultMultilingualDir,
  loadMultilingualManifest,
  missingMultilingualFiles,
  type MultilingualReader,
} from './multilingual/reader.js';

/** Texts whose encoder outputs are remembered unless told otherwise (about 6.5 MB). */
export const DEFAULT_ENCODER_CACHE = 4096;

/**
 * Where a cache keeps its outputs: the table `buffer` shared with other engines, else a table of
 * its own of `entries` outputs; null for none (`entries` 0).
 */
function cacheSource(
  buffer: SharedArrayBuffer | undefined,
  entries: number = DEFAULT_ENCODER_CACHE,
): SharedArrayBuffer | number | null {
  return buffer ?? (entries > 0 ? entries : null);
}

export interface DefaultEngineOptions extends Omit<LocalEngineOptions, 'detectors' | 'encoder'> {
  /** Load weights from here instead of the committed model directory. */
  modelDir?: string;
  /**
   * The encoder stage: the mode for policies that do not set `scanners_config.encoder` (default
   * cascade) and, on the main thread, how many threads run it (default 1). Plain data, so that
   * scoring threads can build the same engine.
   */
  encoder?: {
    mode: EncoderMode;
    threads?: number;
    /**
     * Texts whose encoder outputs are remembered (default 4096; 0: none): the same
     * outputs a new read gives (cached-encoder.ts), for texts that traffic sends again.
     */
    cache?: number;
    /**
     * The table the cache keeps its outputs in, shared by the engines given the same buffer
     * (`encoderCacheTable`; a process's request thread and scoring threads); instead of a table
     * of `cache` entries of the engine's own.
     */
    cacheBuffer?: SharedArrayBuffer;
    /** The same for the multilingual reader's cache (`multilingualCacheBuffer`). */
    multilingualCacheBuffer?: SharedArrayBuffer;
    dir?: string;
    /** The multilingual reader, when its weights are installed (default true). */
    multilingual?: boolean;
    multilingualDir?: string;
  };
}

export interface DefaultEngine extends LocalEngine {
  /** Stops the encoder's threads or session, if one was started. */
  close(): Promise<void>;
  /** What the encoder's cache answered so far; null before the encoder loads or without a cache. */
  encoderCacheStats(): EncoderCacheStats | null;
}

/**
 * The encoder stage, loaded on first use: an engine on the main thread hands inference to its own
 * threads (onnxruntime-node runs on the calling thread), one on a scoring thread runs it there,
 * and so does one run from sources (tests and scripts under tsx: no compiled worker module).
 * Null when the weights are not there (a checkout without models/encoder): the static detectors
 * answer alone.
 */
function encoderStage(options: DefaultEngineOptions['encoder']): {
  stage: EncoderStage | undefined;
  close: () => Promise<void>;
  cacheStats: () => EncoderCacheStats | null;
} {
  const dir = options?.dir ?? defaultEncoderDir();
  if (!existsSync(path.join(dir, 'encoder.json')))
    return { stage: undefined, close: async () => undefined, cacheStats: () => null };
  const manifest = loadEncoderManifest(dir);
  let loading: Promise<Encoder> | null = null;
  let cached: CachedEncoder | null = null;
  const cache = cacheSource(options?.cacheBuffer, options?.cache);
  const ml = options?.multilingual === false ? null : multilingualStage(options);
  return {
    stage: {
      defaultMode: options?.mode ?? 'cascade',
      manifest,
      countTokens: wordPieceCounter(),
      encoder: () =>
        (loading ??= (
          isMainThread && encoderPoolAvailable()
            ? Promise.resolve(createEncoderPool({ threads: options?.threads ?? 1, dir, manifest }))
            : createOnnxEncoder(dir)
        ).then((e) => (cache === null ? e : (cached = cachedEncoder(e, cache))))),
      ...(ml ? { multilingual: ml.stage } : {}),
    },
    close: async () => {
      if (loading) await (await loading).close();
      await ml?.close();
    },
    cacheStats: () => cached?.stats() ?? null,
  };
}

/**
 * The multilingual reader, loaded on first use like the encoder (its own threads on the main
 * thread). Null when the repository's manifest has no harm head; without the weights (not
 * fetched) the stage is there and says so in the notes of the requests it should have read.
 */
function multilingualStage(options: DefaultEngineOptions['encoder']): {
  stage: MultilingualStage;
  close: () => Promise<void>;
} | null {
  const dir = options?.multilingualDir ?? defaultMultilingualDir();
  if (!existsSync(path.join(dir, 'multilingual.json'))) return null;
  const manifest = loadMultilingualManifest(dir);
  if (!manifest.harm) return null;
  let loading: Promise<MultilingualReader> | null = null;
  return {
    stage: {
      manifest,
      sends: englishGate(manifest.gate),
      reader: () =>
        (loading ??= (async () => {
          const missing = missingMultilingualFiles(dir, manifest);
          if (missing.length > 0)
            throw new Error(
              `not installed (npm run fetch:multilingual writes ${missing.join(', ')})`,
            );
          const reader =
            isMainThread && multilingualPoolAvailable()
              ? createMultilingualPool({ threads: options?.threads ?? 1, dir, manifest })
              : await createOnnxMultilingualReader(dir);
          const cache = cacheSource(options?.multilingualCacheBuffer, options?.cache);
          return cache === null ? reader : cachedReader(reader, cache);
        })()),
    },
    close: async () => {
      const reader = await loading?.catch(() => null);
      await reader?.close();
    },
  };
}

/**
 * A table for the encoder's cache that engines share when each is given its buffer
 * (`cacheBuffer`), of `entries` outputs of the encoder in `dir`; its `stats()` count for them all.
 * Null when `entries` is 0 or the encoder is not there.
 */
export function encoderCacheTable(
  entries: number = DEFAULT_ENCODER_CACHE,
  dir: string = defaultEncoderDir(),
): SharedOutputTable | null {
  if (entries <= 0 || !existsSync(path.join(dir, 'encoder.json'))) return null;
  return SharedOutputTable.create(entries, loadEncoderManifest(dir));
}

/**
 * The same for the multilingual reader's cache (`multilingualCacheBuffer`); null when `entries`
 * is 0 or the reader has no harm head here.
 */
export function multilingualCacheTable(
  entries: number = DEFAULT_ENCODER_CACHE,
  dir: string = defaultMultilingualDir(),
): SharedOutputTable | null {
  if (entries <= 0 || !existsSync(path.join(dir, 'multilingual.json'))) return null;
  const manifest = loadMultilingualManifest(dir);
  if (!manifest.harm) return null;
  return SharedOutputTable.create(entries, readerShape(manifest));
}

export function createDefaultEngine(options: DefaultEngineOptions = {}): DefaultEngine {
  const { modelDir, encoder, ...rest } = options;
  const { stage, close, cacheStats } = encoderStage(encoder);
  const engine = createLocalEngine({
    ...rest,
    detectors: createMlDetectors(modelDir ? { modelDir } : {}),
    ...(stage ? { encoder: stage } : {}),
  });
  return { ...engine, close, encoderCacheStats: cacheStats };
}
