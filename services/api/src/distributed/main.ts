import { createLogger, runRole } from '@guard/platform';
import { loadDistributedApiConfig } from './config.js';
import { startDistributedApi } from './start-api.js';

/**
 * ROLE=api in MODE=distributed: one stateless HTTP pod of the API. Settings: config.ts and
 * docs/distributed.md.
 */
const config = loadDistributedApiConfig(process.env);
const logger = createLogger({ level: config.logLevel, logContent: config.logContent, name: 'api' });
await runRole(logger, 'api', async (lifecycle) => {
  await startDistributedApi(config, logger, lifecycle);
});
