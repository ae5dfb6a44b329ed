import type { Logger } from 'pino';
import { startTracing } from './tracing.js';

type Closer = () => Promise<void> | void;

/**
 * Graceful shutdown: closers run in reverse registration order (last opened, first closed), once,
 * on SIGTERM/SIGINT or an explicit call. A second signal exits at once.
 */
export class Lifecycle {
  private closers: { name: string; close: Closer }[] = [];
  private closing: Promise<void> | null = null;

  constructor(private readonly logger: Logger) {}

  onClose(name: string, close: Closer): void {
    this.closers.push({ name, close });
  }

  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        for (const { name, close } of [...this.closers].reverse()) {
          try {
            await close();
          } catch (err) {
            this.logger.error({ err, component: name }, 'error during shutdown');
          }
        }
      })();
    }
    return this.closing;
  }

  installSignalHandlers(): void {
    let signalled = false;
    const handler = (signal: NodeJS.Signals) => {
      if (signalled) process.exit(1);
      signalled = true;
      this.logger.info({ signal }, 'shutting down');
      void this.close().then(() => process.exit(0));
    };
    process.on('SIGTERM', handler);
    process.on('SIGINT', handler);
  }
}

/**
 * A role's process of distributed mode: signal handlers first (a stop that arrives during start-up
 * is still an orderly exit), then tracing (on unless the `OTEL_*` variables say otherwise, as
 * `guard-<name>`; flushed last), then `start`, which registers what it opens with the lifecycle. A start that
 * fails, or a `failed` promise it hands back that rejects later (a worker that died), is logged,
 * what was opened is closed, and the process exits 1.
 */
export async function runRole(
  logger: Logger,
  name: string,
  start: (lifecycle: Lifecycle) => Promise<{ failed?: Promise<unknown> } | void>,
): Promise<void> {
  const lifecycle = new Lifecycle(logger);
  lifecycle.installSignalHandlers();
  const fail = async (err: unknown, what: string) => {
    logger.error({ err }, `${name} ${what}`);
    await lifecycle.close();
    process.exit(1);
  };
  try {
    const tracing = await startTracing({
      serviceName: `guard-${name.replaceAll(' ', '-')}`,
      defaultOn: true,
      logger,
    });
    lifecycle.onClose('tracing', tracing.shutdown);
    const started = await start(lifecycle);
    started?.failed?.catch((err: unknown) => fail(err, 'failed'));
  } catch (err) {
    await fail(err, 'failed to start');
  }
}
