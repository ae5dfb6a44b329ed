import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths never written to logs: credentials in headers and bodies, and (unless
 * GUARD_LOG_CONTENT is on) the content users send us to score.
 */
const SECRET_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-goog-api-key"]',
  'req.headers["x-upstream-api-key"]',
  'req.headers.cookie',
  '*.apiKey',
  '*.api_key',
  '*.key',
  '*.password',
  '*.secret',
  '*.token',
];
const CONTENT_PATHS = ['*.text', '*.messages', '*.prompt', '*.content', '*.input', '*.output'];

export interface LoggerConfig {
  level: string;
  logContent: boolean;
  pretty?: boolean;
  name?: string;
}

export function createLogger(config: LoggerConfig, destination?: NodeJS.WritableStream): Logger {
  const options: LoggerOptions = {
    level: config.level,
    base: config.name ? { service: config.name } : {},
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: config.logContent ? SECRET_PATHS : [...SECRET_PATHS, ...CONTENT_PATHS],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
