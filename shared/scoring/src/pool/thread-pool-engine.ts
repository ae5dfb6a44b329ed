import { Piscina } from 'piscina';
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
  const pool = new Piscina<ScoreRequest, ScoreResult>({
    filename: String(options.workerFile ?? new URL('./score-worker.js', import.meta.url)),
    minThreads: options.threads,
    maxThreads: options.threads,
    // Threads hold loaded detectors: keep them for the life of the process.
    idleTimeout: Number.MAX_SAFE_INTEGER,
    workerData: options.engine ?? {},
  });
  // One small task per thread, each answered once that thread has loaded its module: `close`
  // waits for them (see `loaded` in score-worker.ts).
  const probe = pool as unknown as Piscina<null, true>; // the `loaded` export takes nothing
  const allLoaded = Promise.allSettled(
    Array.from({ length: options.threads }, () => probe.run(null, { name: 'loaded' })),
  );
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
    close: async () => {
      await allLoaded;
      await pool.close();
    },
    get stats() {
      return { queued: pool.queueSize, threads: pool.threads.length, timedOut };
    },
  };
}
