import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  NativeConnection,
  Runtime,
  Worker,
  type Logger as TemporalLogger,
  type LogLevel,
  type LogMetadata,
  type WorkflowBundle,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { ActivityStore, JobStore, PolicyStore } from '@guard/domain';
import type { Lifecycle, Logger } from '@guard/platform';
import { startHealthServer, type RunningHealthServer } from '@guard/platform/health-server';
import { processMetrics } from '@guard/platform/metrics';
import { createTemporalJobActivities } from '@guard/adapters/temporal/jobs.activities';
import { bundleJobWorkflows } from '@guard/adapters/temporal/job-workflow-bundle';
import type { JobsWorkerSettings } from './config.js';

/**
 * Where `npm run build:workflow-bundle` writes the job workflows bundled ahead of time (the
 * container image has it): next to this module in dist. From source it is never there, so tests
 * and `tsx` always bundle the workflows they run.
 */
export const PREBUILT_WORKFLOW_BUNDLE = fileURLToPath(
  new URL('./job-workflows.bundle.js', import.meta.url),
);

/** What the job activities read and write. */
export interface JobWorkerStores {
  jobs: JobStore;
  policies: PolicyStore;
  activities: ActivityStore;
}

export interface RunningJobsWorker {
  worker: Worker;
  health: RunningHealthServer;
  /** Settles when the worker stops: resolves after a graceful stop, rejects on a fatal error. */
  done: Promise<void>;
}

/** Temporal's log calls as JSON lines of this process's logger; `demote` moves info to debug. */
export function temporalLogger(logger: Logger, demote = false): TemporalLogger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const fields = { component: 'temporal', ...meta };
    if (level === 'ERROR') logger.error(fields, message);
    else if (level === 'WARN') logger.warn(fields, message);
    else if (level === 'INFO' && !demote) logger.info(fields, message);
    else if (level === 'TRACE') logger.trace(fields, message);
    else logger.debug(fields, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}

/**
 * Once per process, before any worker: Temporal's logs go through `logger`, and Temporal leaves
 * signals alone (the process's Lifecycle stops the worker, in its order).
 */
export function installTemporalRuntime(logger: Logger): void {
  Runtime.install({ logger: temporalLogger(logger), shutdownSignals: [] });
}

/**
 * The composition root of the jobs-worker role, over the stores it is given: the job workflows
 * (the prebuilt bundle when the build wrote one, as in the image; otherwise bundled here, at
 * start, from the module next to the runner that starts them, so the two never disagree), the
 * job activities over the stores, a Temporal worker on the jobs task queue, and the probe server. A stop (Lifecycle) shuts the worker down first: it stops polling, lets
 * running activities finish for up to `shutdownGraceMs` (what it cancels is retried on another
 * worker), then the connection and the probe server close.
 */
export async function startJobsWorker(
  settings: JobsWorkerSettings,
  stores: JobWorkerStores,
  logger: Logger,
  lifecycle: Lifecycle,
  options: { workflowBundle?: WorkflowBundle } = {},
): Promise<RunningJobsWorker> {
  const log = logger.child({ task_queue: settings.temporal.taskQueue });
  // Probes answer from the start (not ready while the workflows bundle), the worker comes later.
  const current: { worker?: Worker } = {};
  const health = await startHealthServer(
    {
      live: () => current.worker?.getState() !== 'FAILED',
      ready: () => current.worker?.getState() === 'RUNNING',
    },
    settings.port,
    settings.host,
    settings.metrics ? processMetrics() : null,
  );
  lifecycle.onClose('health server', health.close);
  log.info({ url: health.url }, 'probes listening');

  const started = Date.now();
  const prebuilt =
    settings.workflowBundlePath ||
    (existsSync(PREBUILT_WORKFLOW_BUNDLE) ? PREBUILT_WORKFLOW_BUNDLE : undefined);
  let workflowBundle: WorkflowBundleOption | undefined = options.workflowBundle;
  if (workflowBundle) {
    log.info('job workflows given');
  } else if (prebuilt) {
    if (!existsSync(prebuilt)) throw new Error(`no workflow bundle at ${prebuilt}`);
    workflowBundle = { codePath: prebuilt };
    log.info({ workflow_bundle: prebuilt }, 'job workflows from a prebuilt bundle');
  } else {
    workflowBundle = await bundleJobWorkflows({ logger: temporalLogger(logger, true) });
    log.info({ ms: Date.now() - started }, 'job workflows bundled at start');
  }

  const connection = await NativeConnection.connect({ address: settings.temporal.address });
  lifecycle.onClose('temporal connection', () => connection.close());
  const worker = await Worker.create({
    connection,
    namespace: settings.temporal.namespace,
    taskQueue: settings.temporal.taskQueue,
    workflowBundle,
    activities: createTemporalJobActivities({ ...stores, now: () => new Date() }),
    maxConcurrentActivityTaskExecutions: settings.maxActivities,
    shutdownGraceTime: settings.shutdownGraceMs,
  });
  current.worker = worker;
  const done = worker.run();
  // Observed here so a fatal error is never unhandled; the caller decides what it means.
  done.catch(() => undefined);
  lifecycle.onClose('temporal worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await done.catch((err: unknown) => log.error({ err }, 'jobs worker stopped with an error'));
  });
  log.info(
    { namespace: settings.temporal.namespace, address: settings.temporal.address },
    'jobs worker polling',
  );
  return { worker, health, done };
}
