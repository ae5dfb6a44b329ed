import { RedisScoreWorker } from '@guard/adapters/redis/redis-score-worker';
import type { Lifecycle, Logger } from '@guard/platform';
import { startHealthServer, type RunningHealthServer } from '@guard/platform/health-server';
import { processMetrics, type GuardMetrics } from '@guard/platform/metrics';
import { createServingEngine, meterCaches } from '@guard/scoring/pool/serving-engine';
import type { ScorerConfig } from './config.js';

export interface RunningScorer {
  worker: RedisScoreWorker;
  health: RunningHealthServer;
}

/**
 * The composition root of the scorer role: the scoring core (threads as configured), the Redis
 * Streams consumer around it, and the probe server. Every piece is registered with `lifecycle`,
 * so a stop closes them in reverse: the consumer stops reading and answers what it holds, then
 * the probe server closes and the scoring threads stop.
 */
export async function startScorerProcess(
  config: ScorerConfig,
  logger: Logger,
  lifecycle: Lifecycle,
): Promise<RunningScorer> {
  const scoring = createServingEngine({
    threads: config.scoreThreads,
    timeoutMs: config.scoreTimeoutMs,
    inlineChars: config.scoreInlineChars,
    judge: config.judge,
    encoder: config.encoder,
  });
  lifecycle.onClose('scoring engine', scoring.close);

  const worker = new RedisScoreWorker({
    redisUrl: config.redisUrl,
    engine: scoring.engine,
    logger,
    requestStream: config.requestStream,
    group: config.group,
    concurrency: config.concurrency,
    claimIdleMs: config.claimIdleMs,
  });

  const metrics = config.metrics ? processMetrics() : null;
  if (metrics) {
    meterWorker(metrics, worker);
    meterCaches(metrics, scoring.cacheStats);
  }
  const health = await startHealthServer(worker, config.port, config.host, metrics);
  lifecycle.onClose('health server', health.close);
  logger.info({ url: health.url }, 'probes listening');

  lifecycle.onClose('score worker', () => worker.stop());
  await worker.start();
  return { worker, health };
}

/** The worker's own counters and the shared backlog, read when Prometheus scrapes. */
function meterWorker(metrics: GuardMetrics, worker: RedisScoreWorker): void {
  metrics.gaugeFrom(
    'guard_scorer_queue_depth',
    'Score requests queued in the Redis request stream, not yet answered.',
    () => worker.backlog(),
  );
  metrics.gaugeFrom(
    'guard_scorer_queue_age_seconds',
    'Age of the oldest score request still queued (0 when none): how far behind the scorers are.',
    () => worker.backlogAgeSeconds(),
  );
  metrics.countersOf(worker.stats, {
    scored: ['guard_scorer_scored_total', 'Requests this scorer scored and answered.'],
    expired: ['guard_scorer_expired_total', 'Requests answered deadline_exceeded.'],
    failed: ['guard_scorer_failed_total', 'Requests answered with an error.'],
    reclaimed: [
      'guard_scorer_reclaimed_total',
      'Requests taken over from a silent scorer (XAUTOCLAIM).',
    ],
    droppedExpired: [
      'guard_scorer_dropped_expired_total',
      'Reclaimed requests already past their deadline, dropped unanswered.',
    ],
  });
}
