/**
 * The body of a scoring thread: one engine per thread, built once from options that crossed the
 * thread boundary as plain data. Piscina calls the default export for every task.
 */
import { workerData } from 'node:worker_threads';
import { createDefaultEngine, type DefaultEngineOptions } from '../default-engine.js';
import type { ScoreRequest, ScoreResult } from '../engine-types.js';

const engine = createDefaultEngine((workerData ?? {}) as DefaultEngineOptions);

export default function score(request: ScoreRequest): Promise<ScoreResult> {
  return engine.score(request);
}

/**
 * Answers once this thread has loaded this module (and its detectors): the pool waits for it
 * before it stops the threads, since a thread terminated while it is still loading its module
 * aborts the whole process on Node 20 (require of an ES module, interrupted).
 */
export function loaded(): true {
  return true;
}
