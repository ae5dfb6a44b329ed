import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '@guard/platform';

/**
 * Routes kafkajs' own log lines into our pino logger. kafkajs reports states it retries by
 * itself (a broker restarting, a coordinator still loading) at ERROR; here they become `warn`,
 * because `error` means someone must act, and a call that finally fails rejects anyway.
 */
export function kafkaLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, ...extra } = log;
      const fields = { component: 'kafkajs', namespace, ...extra };
      if (level === logLevel.ERROR || level === logLevel.WARN) logger.warn(fields, message);
      else if (level === logLevel.INFO) logger.debug(fields, message);
      else logger.trace(fields, message);
    };
}
