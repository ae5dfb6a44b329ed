import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@guard/platform';
import type { Principal } from '@guard/domain';

export interface RequestContext {
  readonly requestId: string;
  readonly logger: Logger;
  principal: Principal | null;
  /** Policy and activity endpoints answer validation errors as `{detail: [...]}`; the rest use the standard body. */
  validationStyle: 'detail' | 'standard';
}

declare module 'express-serve-static-core' {
  interface Request {
    ctx: RequestContext;
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The child logger is made on first use: most requests never log beyond the access line. */
class Context implements RequestContext {
  principal: Principal | null = null;
  validationStyle: 'detail' | 'standard' = 'standard';
  private child: Logger | null = null;

  constructor(
    readonly requestId: string,
    private readonly base: Logger,
  ) {}

  get logger(): Logger {
    this.child ??= this.base.child({
      request_id: this.requestId,
      org_id: this.principal?.org_id,
      key_id: this.principal?.key_id,
    });
    return this.child;
  }
}

export function requestContext(logger: Logger, accessLog: boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers['x-request-id'];
    const requestId =
      typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    req.ctx = new Context(requestId, logger);
    if (accessLog) {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        logger.info(
          {
            request_id: requestId,
            org_id: req.ctx.principal?.org_id,
            method: req.method,
            // The route pattern, not the raw path, so log lines group by endpoint.
            route: req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : undefined,
            path: req.originalUrl.split('?')[0],
            status: res.statusCode,
            duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
          },
          'request',
        );
      });
    }
    next();
  };
}

export function requirePrincipal(req: Request): Principal {
  const p = req.ctx.principal;
  if (!p) throw new Error('route mounted without authentication');
  return p;
}
