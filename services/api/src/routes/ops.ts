import {
  Router,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import swaggerUi from 'swagger-ui-express';
import { buildOpenApiDocument } from '@guard/contracts';
import type { ApiDeps } from '../deps.js';

/** Unauthenticated routes: probes, the Prometheus scrape and API documentation. */
export function opsRouter(deps: Pick<ApiDeps, 'ready' | 'config' | 'logger' | 'metrics'>): Router {
  const r = Router();
  let openapi: object | null = null;
  const doc = () => (openapi ??= buildOpenApiDocument(deps.config.version));

  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: deps.config.version });
  });

  r.get('/readyz', async (_req, res) => {
    let ready = false;
    try {
      ready = await deps.ready();
    } catch (err) {
      deps.logger.warn({ err }, 'readiness check failed');
    }
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready' });
  });

  const metrics = deps.metrics;
  // Not in the OpenAPI document: it is for Prometheus, not for API clients (as /openapi.json).
  if (metrics)
    r.get('/metrics', async (_req, res) => {
      let text: string;
      try {
        text = await metrics.render();
      } catch (err) {
        // Only with GUARD_WORKERS > 1: the primary, which gathers the workers, did not answer.
        deps.logger.warn({ err }, 'metrics scrape failed');
        res.status(503).type('text/plain').send('metrics unavailable, try again\n');
        return;
      }
      res.set('content-type', metrics.contentType).set('cache-control', 'no-store').send(text);
    });

  r.get('/openapi.json', (_req, res) => {
    res.json(doc());
  });

  // swagger-ui-express serves its assets from the installed package: no CDN is needed.
  let docsPage: RequestHandler | null = null;
  r.use('/docs', swaggerUi.serve, (req: Request, res: Response, next: NextFunction) => {
    docsPage ??= swaggerUi.setup(doc(), { customSiteTitle: 'Guardrail API' });
    docsPage(req, res, next);
  });
  return r;
}
