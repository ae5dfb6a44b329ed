import { createLogger, Lifecycle } from '@guard/platform';
import { loadConfig } from './config.js';
import { startScorerProcess } from './scorer-process.js';

/**
 * ROLE=scorer: scores the requests API pods add to the Redis request stream, as one consumer of
 * the scorers' group, until SIGTERM. Settings: see config.ts and the service README.
 */
const config = loadConfig(process.env);
const logger = createLogger({ level: config.logLevel, logContent: false, name: 'scorer' });
// Handlers first: a stop that arrives during start-up is still an orderly exit.
const lifecycle = new Lifecycle(logger);
lifecycle.installSignalHandlers();

try {
  await startScorerProcess(config, logger, lifecycle);
} catch (err) {
  logger.error({ err }, 'scorer failed to start');
  await lifecycle.close();
  process.exit(1);
}
