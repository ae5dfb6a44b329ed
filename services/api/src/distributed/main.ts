import { createLogger, Lifecycle } from '@guard/platform';
import { loadDistributedApiConfig } from './config.js';
import { startDistributedApi } from './start-api.js';

/**
 * ROLE=api in MODE=distributed: one stateless HTTP pod of the API. Settings: config.ts and
 * docs/distributed.md.
 */
const config = loadDistributedApiConfig(process.env);
const logger = createLogger({ level: config.logLevel, logContent: config.logContent, name: 'api' });
// Handlers first: a stop that arrives during start-up is still an orderly exit.
const lifecycle = new Lifecycle(logger);
lifecycle.installSignalHandlers();

try {
  await startDistributedApi(config, logger, lifecycle);
} catch (err) {
  logger.error({ err }, 'api failed to start');
  await lifecycle.close();
  process.exit(1);
}
