import { createLogger, runRole } from '@guard/platform';
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
await runRole(logger, 'jobs worker', async (lifecycle) => {
  const stores = await buildStores(config, logger, lifecycle);
  const { done } = await startJobsWorker(config, stores, logger, lifecycle);
  return { failed: done };
});
