import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createLogger, Lifecycle, type Logger } from '@guard/platform';
import { createApp } from '@guard/api';
import type { StandaloneConfig } from './config.js';
import { buildEmbeddedDeps } from './deps.js';
import { bootstrapStore } from './bootstrap.js';

export interface RunningServer {
  url: string;
  port: number;
  server: Server;
  close: () => Promise<void>;
  /** The bootstrap admin key, when this start generated it (first start on an empty store). */
  bootstrapKey: string | null;
  /** True when this start created the default org and its admin key. */
  bootstrapped: boolean;
}

export async function startServer(
  config: StandaloneConfig,
  logger: Logger = createLogger({
    level: config.logLevel,
    logContent: config.logContent,
    name: 'guard',
  }),
): Promise<RunningServer> {
  if (config.mode !== 'embedded') {
    throw new Error(
      'The standalone server runs MODE=embedded only; distributed mode runs each role: MODE=distributed ROLE=api|scorer|activity-ingester|jobs-worker node services/standalone/dist/role.js (docs/distributed.md).',
    );
  }
  const lifecycle = new Lifecycle(logger);
  const deps = buildEmbeddedDeps(config, logger);
  lifecycle.onClose('sqlite', () => {
    deps.db.close();
  });
  lifecycle.onClose('scoring', deps.closeEngine);
  // Closed once the HTTP server is: running jobs get a grace period, then resume at next start.
  lifecycle.onClose('jobs', () => deps.jobs.close());

  const boot = await bootstrapStore(
    { orgs: deps.api.orgs, keys: deps.api.keys, newId: deps.api.newId, now: deps.api.now },
    config,
    logger,
  );

  // The only process on the database (GUARD_WORKERS=1): every job left unfinished was its
  // predecessor's, resume it now. With several workers, a job is resumed once its lease lapses.
  const resumed = await deps.jobs.resume({ takeOver: config.workers <= 1 });
  if (resumed > 0) logger.info({ jobs: resumed }, 'resuming jobs left unfinished');

  const app = createApp(deps.api);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, (err?: Error) =>
      err ? reject(err) : resolve(s),
    );
  });
  server.keepAliveTimeout = 65_000;
  // Registered before the HTTP server so it runs after it on close: buffered activity is
  // written once no request can add more.
  lifecycle.onClose('activity', () => deps.api.activitySink.flush());
  lifecycle.onClose(
    'http',
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  );

  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  logger.info({ port, data_dir: config.dataDir, mode: config.mode }, 'guard listening');
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    close: () => lifecycle.close(),
    bootstrapKey: boot.generatedKey,
    bootstrapped: boot.bootstrapped,
  };
}
