import type { ScoreEngine, ScoreRequest, ScoreResult } from '../engine-types.js';

/** A scoring call that did not finish in time: the caller answers with its fail mode. */
export class ScoreDeadlineError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`scoring did not finish within ${timeoutMs} ms`);
    this.name = 'ScoreDeadlineError';
  }
}

/** The deadline of one call, combined with any signal the caller brings. */
export function deadlineSignal(timeoutMs: number, signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([timeout, signal]) : timeout;
}

/**
 * Puts a deadline on an engine that scores on the calling thread (GUARD_SCORE_THREADS=0). It can
 * only stop waiting: synchronous work keeps the thread until it ends, which is why the server
 * scores in worker threads by default.
 */
export function withDeadline(engine: ScoreEngine, timeoutMs: number): ScoreEngine {
  return {
    score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
      const deadline = deadlineSignal(timeoutMs, signal);
      return new Promise<ScoreResult>((resolve, reject) => {
        const onAbort = () =>
          reject(signal?.aborted ? signal.reason : new ScoreDeadlineError(timeoutMs));
        if (deadline.aborted) return onAbort();
        deadline.addEventListener('abort', onAbort, { once: true });
        engine
          .score(request, deadline)
          .then(resolve, reject)
          .finally(() => deadline.removeEventListener('abort', onAbort));
      });
    },
  };
}
