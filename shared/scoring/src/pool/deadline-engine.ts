import type { ScoreEngine, ScoreRequest, ScoreResult } from '../engine-types.js';

/** A scoring call that did not finish in time: the caller answers with its fail mode. */
export class ScoreDeadlineError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`scoring did not finish within ${timeoutMs} ms`);
    this.name = 'ScoreDeadlineError';
  }
}

/**
 * The deadline of one call, combined with any signal the caller brings. `clear` must be called
 * when the call ends: unlike `AbortSignal.timeout`, the timer is then dropped instead of firing
 * (and allocating an abort) long after every call it was made for has answered.
 */
export function deadlineSignal(
  timeoutMs: number,
  signal?: AbortSignal,
): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ScoreDeadlineError(timeoutMs)), timeoutMs);
  timer.unref();
  const onCaller = () => controller.abort(signal?.reason);
  if (signal?.aborted) onCaller();
  else signal?.addEventListener('abort', onCaller, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCaller);
    },
  };
}

/**
 * Puts a deadline on an engine that scores on the calling thread (GUARD_SCORE_THREADS=0). It can
 * only stop waiting: synchronous work keeps the thread until it ends, which is why the server
 * scores in worker threads by default.
 */
export function withDeadline(engine: ScoreEngine, timeoutMs: number): ScoreEngine {
  return {
    score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
      const { signal: deadline, clear } = deadlineSignal(timeoutMs, signal);
      return new Promise<ScoreResult>((resolve, reject) => {
        const onAbort = () =>
          reject(signal?.aborted ? signal.reason : new ScoreDeadlineError(timeoutMs));
        if (deadline.aborted) return onAbort();
        deadline.addEventListener('abort', onAbort, { once: true });
        engine
          .score(request, deadline)
          .then(resolve, reject)
          .finally(() => {
            deadline.removeEventListener('abort', onAbort);
            clear();
          });
      });
    },
  };
}
