import express, { type Express, type RequestHandler, type Router } from 'express';
import type { MonitorDeps } from '@guard/domain';
import type { ApiDeps } from './deps.js';
import { authMiddleware } from './http/auth.js';
import { requestContext } from './http/context.js';
import { errorHandler, notFoundHandler } from './http/errors.js';
import { jsonBody } from './http/body.js';
import { opsRouter } from './routes/ops.js';
import { policiesRouter } from './routes/policies.js';
import { monitorRouter } from './routes/monitor.js';
import { orgsRouter } from './routes/orgs.js';
import { activityRouter } from './routes/activity.js';
import { activityExportJobsRouter } from './routes/activity-export-jobs.js';
import {
  completionsRouter,
  rootChatRouter,
  type CompletionsRouteDeps,
} from './completions/completions-router.js';
import { createUpstreamResolver } from './completions/upstream-routing.js';
import { meteredActivitySink } from './metrics/metered-activity-sink.js';
import { meteredUpstream } from './metrics/metered-upstream.js';
import { tracedUpstream } from './completions/traced-upstream.js';

/** Activities per store read of an export job (counting and download alike). */
const EXPORT_JOB_PAGE_SIZE = 1000;

/** Builds the HTTP app from its dependencies. No I/O happens here: the caller listens. */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  const metrics = deps.metrics ?? null;
  app.use(requestContext(deps.logger, deps.config.accessLog, metrics));
  app.use(opsRouter(deps));
  const body = jsonBody({
    limitBytes: deps.config.bodyLimitBytes,
    maxDepth: deps.config.maxJsonDepth,
  });
  const auth = authMiddleware(deps);
  /**
   * Each API family declares, where it is mounted, how its errors look: the policy and org
   * endpoints answer input problems in the validation body `{detail: [...]}`, the guard endpoints
   * in the standard body. The style is set before the body is read, so that unreadable JSON
   * answers in it too.
   */
  const mount = (path: string, errorStyle: 'detail' | 'standard', router: Router) => {
    const declare: RequestHandler = (req, _res, next) => {
      req.ctx.validationStyle = errorStyle;
      req.ctx.mountPath = path;
      next();
    };
    app.use(path, declare, ...body, auth, router);
  };

  mount(
    '/policies',
    'detail',
    policiesRouter({
      policies: deps.policies,
      jobs: deps.jobs,
      newId: deps.newId,
      now: deps.now,
    }),
  );
  mount(
    '/orgs',
    'detail',
    orgsRouter({
      orgs: deps.orgs,
      keys: deps.keys,
      policies: deps.policies,
      newId: deps.newId,
      now: deps.now,
    }),
  );
  const monitorDeps: MonitorDeps = {
    policies: deps.policies,
    orgs: deps.orgs,
    engine: deps.engine,
    // Measured here rather than in each composition root: every process that serves the API
    // counts decisions and upstream calls the same way, and the domain stays free of metrics.
    activity: metrics ? meteredActivitySink(deps.activitySink, metrics) : deps.activitySink,
    newId: deps.newId,
    now: deps.now,
    failMode: deps.config.failMode,
    excerptChars: deps.config.excerptChars,
  };
  mount(
    '/activity',
    'detail',
    activityRouter({
      activities: deps.activities,
      orgs: deps.orgs,
      now: deps.now,
      settleMs: deps.config.activitySettleMs,
    }),
  );
  mount(
    '/activity',
    'detail',
    activityExportJobsRouter({
      jobs: deps.jobs,
      activities: deps.activities,
      newId: deps.newId,
      now: deps.now,
      settleMs: deps.config.activitySettleMs,
      pageSize: EXPORT_JOB_PAGE_SIZE,
    }),
  );
  const limits = { maxMessages: deps.config.maxMessages, maxTextChars: deps.config.maxTextChars };
  mount('/guard', 'standard', monitorRouter(monitorDeps, limits));
  const completions: CompletionsRouteDeps = {
    completion: {
      ...monitorDeps,
      stream: deps.config.stream,
      outputContextChars: deps.config.outputContextChars,
    },
    upstream: tracedUpstream(metrics ? meteredUpstream(deps.upstream, metrics) : deps.upstream),
    resolveUpstream: createUpstreamResolver(deps.upstreamRouting),
    limits,
  };
  mount('/guard', 'standard', completionsRouter(completions));
  mount('/chat/completions', 'standard', rootChatRouter(completions));

  app.use(notFoundHandler());
  app.use(errorHandler());
  return app;
}
