import cluster from 'node:cluster';
import { missingMultilingualFiles } from '@guard/scoring/multilingual/reader';
import { createLogger, Lifecycle, type Logger } from '@guard/platform';
import { joinClusterMetrics, processMetrics, serveClusterMetrics } from '@guard/platform/metrics';
import { startTracing } from '@guard/platform/tracing';
import { embeddedIds, openEmbeddedStores } from './deps.js';
import { loadConfig, type StandaloneConfig } from './config.js';
import { startServer } from './server.js';
import { bootstrapStore } from './bootstrap.js';
import { startRetention } from './retention.js';

function printBootstrapKey(key: string, url: string): void {
  // Printed once, outside the JSON log stream, so that it never ends up in log storage.
  process.stdout.write(
    `\n  Admin API key for the default org (shown once, store it now):\n\n    ${key}\n\n` +
      `  Try: curl -H "Authorization: Bearer <key>" ${url}/policies\n\n`,
  );
}

/** One process serving everything (GUARD_WORKERS=1, the default). */
async function runSingle(config: StandaloneConfig, logger: Logger): Promise<void> {
  // Handlers first: a stop that arrives while the server starts is still an orderly exit.
  const lifecycle = new Lifecycle(logger);
  lifecycle.installSignalHandlers();
  // Off unless an OTLP exporter is named (docs/operations.md); closed last, after the server.
  const tracing = await startTracing({ serviceName: 'guard', defaultOn: false, logger });
  lifecycle.onClose('tracing', tracing.shutdown);
  const running = await startServer(config, logger);
  lifecycle.onClose('server', running.close);
  const stopRetention = startRetention(config, logger);
  lifecycle.onClose('retention', async () => stopRetention());
  if (running.bootstrapKey) printBootstrapKey(running.bootstrapKey, running.url);
}

/**
 * GUARD_WORKERS > 1: the primary bootstraps the store once, then forks workers that share the
 * listening socket and the SQLite file (WAL mode lets them read concurrently; writes are short
 * batched transactions). A worker that dies is replaced; SIGTERM stops all of them gracefully.
 */
async function runPrimary(config: StandaloneConfig, logger: Logger): Promise<void> {
  const stores = openEmbeddedStores(config.dbFile);
  const boot = await bootstrapStore(
    { orgs: stores.orgs, keys: stores.keys, ...embeddedIds },
    config,
    logger,
  );
  stores.db.close();
  startRetention(config, logger);
  // A scrape reaches one worker; it asks here for every worker's metrics.
  if (config.metrics) serveClusterMetrics();

  // Workers accept connections themselves. With the default round-robin policy the primary
  // accepts and hands each socket over, and keeps it until the worker acknowledges: a worker
  // that is stuck or killed then leaves its clients hanging until they time out. Here a killed
  // worker's connections die with it (the client sees a reset it can retry at once), and the ones
  // it never accepted stay in the kernel's queue for the other workers.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  let stopping = false;
  let printed = false;
  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (msg: { type?: string; url?: string }) => {
      if (msg.type === 'listening' && boot.generatedKey && !printed && msg.url) {
        printed = true;
        printBootstrapKey(boot.generatedKey, msg.url);
      }
    });
  };
  for (let i = 0; i < config.workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    logger.error({ worker: worker.process.pid, code, signal }, 'worker died; starting a new one');
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down workers');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function runWorker(config: StandaloneConfig, logger: Logger): Promise<void> {
  const lifecycle = new Lifecycle(logger);
  lifecycle.installSignalHandlers();
  // Ctrl-C in a terminal reaches every process of the group: let the primary coordinate.
  process.removeAllListeners('SIGINT');
  process.on('SIGINT', () => undefined);
  const tracing = await startTracing({ serviceName: 'guard', defaultOn: false, logger });
  lifecycle.onClose('tracing', tracing.shutdown);
  if (config.metrics) joinClusterMetrics(processMetrics());
  const running = await startServer(config, logger.child({ worker: process.pid }));
  lifecycle.onClose('server', running.close);
  process.send?.({ type: 'listening', url: running.url });
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({
    level: config.logLevel,
    logContent: config.logContent,
    name: 'guard',
  });
  if (cluster.isPrimary && config.encoder.multilingual && config.encoder.mode !== 'off') {
    const missing = missingMultilingualFiles();
    if (missing.length > 0)
      logger.warn(
        { missing },
        'multilingual reader not installed: requests in other languages are read by the English models only (run npm run fetch:multilingual)',
      );
  }
  if (config.workers <= 1) return runSingle(config, logger);
  return cluster.isPrimary ? runPrimary(config, logger) : runWorker(config, logger);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `guard failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
