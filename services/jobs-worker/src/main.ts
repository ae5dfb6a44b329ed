import { createLogger, Lifecycle } from '@guard/platform';
import { buildStores } from './build-stores.js';
import { loadConfig } from './config.js';
import { installTemporalRuntime, startJobsWorker } from './jobs-worker-process.js';

/**
 * ROLE=jobs-worker: runs the job workflows (bulk policy import, activity export) and their
 * activities from the Temporal task queue, over the Cassandra stores, until SIGTERM. Settings:
 * see config.ts and the service README.
 */
const config = loadConfig(process.env);
const logger = createLogger({ level: config.logLevel, logContent: false, name: 'jobs-worker' });
installTemporalRuntime(logger);
// Handlers first: a stop that arrives during start-up is still an orderly exit.
const lifecycle = new Lifecycle(logger);
lifecycle.installSignalHandlers();

try {
  const stores = await buildStores(config, logger, lifecycle);
  const { done } = await startJobsWorker(config, stores, logger, lifecycle);
  done.catch(async (err: unknown) => {
    logger.error({ err }, 'jobs worker failed');
    await lifecycle.close();
    process.exit(1);
  });
} catch (err) {
  logger.error({ err }, 'jobs worker failed to start');
  await lifecycle.close();
  process.exit(1);
}
