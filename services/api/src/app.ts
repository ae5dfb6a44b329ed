import express, { type Express } from 'express';
import { CachingOrgStore, type MonitorDeps, type PolicyDeps } from '@guard/domain';
import type { ApiDeps } from './deps.js';
import { authMiddleware } from './http/auth.js';
import { requestContext } from './http/context.js';
import { errorHandler, notFoundHandler } from './http/errors.js';
import { jsonBody } from './http/body.js';
import { opsRouter } from './routes/ops.js';
import { policiesRouter } from './routes/policies.js';
import { monitorRouter } from './routes/monitor.js';

/** Builds the HTTP app from its dependencies. No I/O happens here: the caller listens. */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  app.use(requestContext(deps.logger, deps.config.accessLog));
  app.use(opsRouter(deps));
  // Set before body parsing, so that malformed JSON on these routes gets their validation body too.
  app.use(['/policies', '/activity'], (req, _res, next) => {
    req.ctx.validationStyle = 'detail';
    next();
  });
  app.use(jsonBody({ limitBytes: deps.config.bodyLimitBytes, maxDepth: deps.config.maxJsonDepth }));

  const policyDeps: PolicyDeps = { policies: deps.policies, newId: deps.newId, now: deps.now };
  const auth = authMiddleware(deps, deps.config.authCacheTtlMs);
  app.use('/policies', auth, policiesRouter(policyDeps));

  const monitorDeps: MonitorDeps = {
    policies: deps.policies,
    // The default-policy lookup on every monitor call; cached like API keys (same TTL).
    orgs: new CachingOrgStore(deps.orgs, deps.config.authCacheTtlMs),
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
