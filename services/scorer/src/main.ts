import { createLogger, runRole } from '@guard/platform';
import { loadConfig } from './config.js';
import { startScorerProcess } from './scorer-process.js';

/**
 * ROLE=scorer: scores the requests API pods add to the Redis request stream, as one consumer of
 * the scorers' group, until SIGTERM. Settings: see config.ts and the service README.
 */
const config = loadConfig(process.env);
const logger = createLogger({ level: config.logLevel, logContent: false, name: 'scorer' });
await runRole(logger, 'scorer', async (lifecycle) => {
  await startScorerProcess(config, logger, lifecycle);
});
