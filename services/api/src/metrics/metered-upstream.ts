import { UpstreamFailure, type UpstreamPort } from '@guard/domain';
import type { GuardMetrics } from '@guard/platform/metrics';

/** The status label of a call that failed: the provider's status, or why there was none. */
function statusOf(err: unknown, signal: AbortSignal): string {
  if (err instanceof UpstreamFailure) return err.status === null ? 'no_answer' : String(err.status);
  return signal.aborted ? 'aborted' : 'error';
}

/**
 * The upstream port, timing each call until the provider answered (for a stream, until its
 * headers: the rest of a stream is the client's reading pace as much as the provider's).
 */
export function meteredUpstream(upstream: UpstreamPort, metrics: GuardMetrics): UpstreamPort {
  return {
    send: async (call) => {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1e3;
      try {
        const reply = await upstream.send(call);
        metrics.observeUpstream(call.target.provider, 'ok', seconds());
        return reply;
      } catch (err) {
        metrics.observeUpstream(call.target.provider, statusOf(err, call.signal), seconds());
        throw err;
      }
    },
  };
}
