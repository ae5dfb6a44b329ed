import express, { type Express } from 'express';
import type { MonitorDeps, PolicyDeps } from '@guard/domain';
import type { ApiDeps } from './deps.js';
import { authMiddleware } from './http/auth.js';
import { requestContext } from './http/context.js';
import { errorHandler, notFoundHandler } from './http/errors.js';
import { jsonBody } from './http/body.js';
import { opsRouter } from './routes/ops.js';
import { policiesRouter } from './routes/policies.js';
import { monitorRouter } from './routes/monitor.js';
import { orgsRouter } from './routes/orgs.js';

/** Builds the HTTP app from its dependencies. No I/O happens here: the caller listens. */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  app.use(requestContext(deps.logger, deps.config.accessLog));
  app.use(opsRouter(deps));
  // Set before body parsing, so that malformed JSON on these routes gets their validation body too.
  app.use(['/policies', '/activity', '/orgs'], (req, _res, next) => {
    req.ctx.validationStyle = 'detail';
    next();
  });
  app.use(jsonBody({ limitBytes: deps.config.bodyLimitBytes, maxDepth: deps.config.maxJsonDepth }));

  const policyDeps: PolicyDeps = { policies: deps.policies, newId: deps.newId, now: deps.now };
  const auth = authMiddleware(deps);
  app.use('/policies', auth, policiesRouter(policyDeps));
  app.use(
    '/orgs',
    auth,
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
    activity: deps.activitySink,
    newId: deps.newId,
    now: deps.now,
    failMode: deps.config.failMode,
    excerptChars: deps.config.excerptChars,
  };
  app.use(
    '/guard',
    auth,
    monitorRouter(monitorDeps, {
      maxMessages: deps.config.maxMessages,
      maxTextChars: deps.config.maxTextChars,
    }),
  );

  app.use(notFoundHandler());
  app.use(errorHandler());
  return app;
}
