import { createLogger, Lifecycle } from '@guard/platform';
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
// Handlers first: a stop that arrives during start-up is still an orderly exit.
const lifecycle = new Lifecycle(logger);
lifecycle.installSignalHandlers();

try {
  await startIngesterProcess(config, logger, lifecycle);
} catch (err) {
  logger.error({ err }, 'activity ingester failed to start');
  await lifecycle.close();
  process.exit(1);
}
