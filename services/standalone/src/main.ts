import { createLogger, Lifecycle } from '@guard/platform';
import { loadConfig } from './config.js';
import { startServer } from './server.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, logContent: config.logContent, name: 'guard' });
  const running = await startServer(config, logger);
  if (running.bootstrapKey) {
    // Printed once, outside the JSON log stream, so that it never ends up in log storage.
    process.stdout.write(
      `\n  Admin API key for the default org (shown once, store it now):\n\n    ${running.bootstrapKey}\n\n` +
        `  Try: curl -H "Authorization: Bearer <key>" ${running.url}/policies\n\n`,
    );
  }
  const lifecycle = new Lifecycle(logger);
  lifecycle.onClose('server', running.close);
  lifecycle.installSignalHandlers();
}

main().catch((err: unknown) => {
  process.stderr.write(`guard failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
