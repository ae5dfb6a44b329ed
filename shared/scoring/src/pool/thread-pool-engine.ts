import { createLoadedPool } from './loaded-pool.js';
import type { DefaultEngineOptions } from '../default-engine.js';
import type { ScoreEngine, ScoreRequest, ScoreResult } from '../engine-types.js';
import { deadlineSignal, ScoreDeadlineError } from './deadline-engine.js';

export interface ThreadPoolEngineOptions {
  /** Scoring threads; each loads its own copy of the detectors (a few MB). */
  threads: number;
  /** A call still queued or running after this is abandoned; a running one loses its thread. */
  timeoutMs: number;
  /** How each thread builds its engine (plain data: it is copied to the threads). */
  engine?: DefaultEngineOptions;
  /** The compiled worker module; defaults to score-worker.js beside this file. */
  workerFile?: string | URL;
}

export interface ThreadPoolEngine extends ScoreEngine {
  /** Waits for the threads to have started and for running calls to end, then stops them. */
  close(): Promise<void>;
  readonly stats: { queued: number; threads: number; timedOut: number };
}

/**
 * The scoring core on worker threads, so that a long request never holds the thread that serves
 * HTTP (health checks and short requests keep answering), and a call past its deadline is really
 * stopped: piscina terminates the thread running it and starts a fresh one.
 */
export function createThreadPoolEngine(options: ThreadPoolEngineOptions): ThreadPoolEngine {
  // Threads hold loaded detectors: kept for the life of the process.
  const { pool, close } = createLoadedPool<ScoreRequest, ScoreResult>({
    filename: options.workerFile ?? new URL('./score-worker.js', import.meta.url),
    threads: options.threads,
    workerData: options.engine ?? {},
  });
  let timedOut = 0;
  return {
    async score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
      const { signal: deadline, clear } = deadlineSignal(options.timeoutMs, signal);
      try {
        return await pool.run(request, { signal: deadline });
      } catch (err) {
        if (deadline.aborted && !signal?.aborted) {
          timedOut++;
          throw new ScoreDeadlineError(options.timeoutMs);
        }
        throw err;
      } finally {
        clear();
      }
    },
    close,
    get stats() {
      return { queued: pool.queueSize, threads: pool.threads.length, timedOut };
    },
  };
}
