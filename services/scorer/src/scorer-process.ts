import { RedisScoreWorker } from '@guard/adapters/redis/redis-score-worker';
import type { Lifecycle, Logger } from '@guard/platform';
import { startHealthServer, type RunningHealthServer } from '@guard/platform/health-server';
import { createServingEngine } from '@guard/scoring/pool/serving-engine';
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

  const health = await startHealthServer(worker, config.port, config.host);
  lifecycle.onClose('health server', health.close);
  logger.info({ url: health.url }, 'probes listening');

  lifecycle.onClose('score worker', () => worker.stop());
  await worker.start();
  return { worker, health };
}
