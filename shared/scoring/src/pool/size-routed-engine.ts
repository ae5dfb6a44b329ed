import type { ScoreEngine, ScoreRequest, ScoreResult } from '../engine-types.js';

/** Characters of text a request asks the engine to read: messages and tool-call arguments. */
export function requestChars(request: ScoreRequest): number {
  let n = 0;
  for (const m of request.messages) {
    n += m.content.length;
    for (const c of m.tool_calls ?? []) n += c.arguments.length;
  }
  return n;
}

/**
 * Short requests on the calling thread, long ones on the thread pool. Scoring is linear in its
 * input, so a request up to `inlineChars` holds the thread for a few milliseconds at most, less
 * than handing it to another thread and back costs (about 0.5 ms of CPU per request, measured
 * with bench:monitor); anything longer goes to the pool, where it cannot stall other requests and
 * its deadline really stops it.
 */
export function createSizeRoutedEngine(options: {
  inline: ScoreEngine;
  pool: ScoreEngine;
  inlineChars: number;
}): ScoreEngine {
  return {
    score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
      return requestChars(request) <= options.inlineChars
        ? options.inline.score(request, signal)
        : options.pool.score(request, signal);
    },
  };
}
