import { createLogger, runRole } from '@guard/platform';
import { loadConfig } from './config.js';
import { startIngesterProcess } from './ingester-process.js';

/**
 * ROLE=activity-ingester: applies the Cassandra migrations, then consumes the activity topic
 * into Cassandra until SIGTERM. Settings: see config.ts and the service README.
 */
const config = loadConfig(process.env);
const logger = createLogger({
  level: config.logLevel,
  logContent: false,
  name: 'activity-ingester',
});
await runRole(logger, 'activity ingester', async (lifecycle) => {
  await startIngesterProcess(config, logger, lifecycle);
});
