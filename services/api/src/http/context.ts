import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@guard/platform';
import {
  contextOf,
  otelContext,
  otelTrace,
  SpanKind,
  SpanStatusCode,
  tracer,
  tracingActive,
  type Span,
} from '@guard/platform/tracing';
import type { GuardMetrics } from '@guard/platform/metrics';
import type { Principal } from '@guard/domain';

export interface RequestContext {
  readonly requestId: string;
  readonly logger: Logger;
  principal: Principal | null;
  /** Policy and activity endpoints answer validation errors as `{detail: [...]}`; the rest use the standard body. */
  validationStyle: 'detail' | 'standard';
  /**
   * Where the router that serves the request is mounted (`/policies`): express puts `baseUrl`
   * back to `''` when an error leaves the router, and the route pattern is still wanted then.
   */
  mountPath: string;
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
  mountPath = '';
  private child: Logger | null = null;

  constructor(
    readonly requestId: string,
    private readonly base: Logger,
    private readonly traceId: string | undefined,
  ) {}

  get logger(): Logger {
    this.child ??= this.base.child({
      request_id: this.requestId,
      trace_id: this.traceId,
      org_id: this.principal?.org_id,
      key_id: this.principal?.key_id,
    });
    return this.child;
  }
}

/** The route pattern: `/policies` for a router's root route, not `/policies/`. */
function routeOf(req: Request): string {
  const base = req.baseUrl || req.ctx.mountPath;
  const path = String(req.route.path);
  return base && path === '/' ? base : `${base}${path}`;
}

/** Where a request's route pattern is unknown (no route matched): one label, not every path. */
const UNMATCHED_ROUTE = 'unmatched';

export function requestContext(
  logger: Logger,
  accessLog: boolean,
  metrics: GuardMetrics | null = null,
) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers['x-request-id'];
    const requestId =
      typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    // The request's server span (when tracing): a child of the caller's `traceparent`, if any.
    let span: Span | undefined;
    if (tracingActive()) {
      span = tracer().startSpan(
        req.method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': req.method,
            'url.path': req.path,
            'guard.request_id': requestId,
          },
        },
        contextOf(req.headers),
      );
    }
    const traceId = span?.spanContext().traceId;
    req.ctx = new Context(requestId, logger, traceId);
    if (accessLog || metrics || span) {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        // The route pattern, not the raw path, so log lines and metrics group by endpoint.
        const route = req.route?.path ? routeOf(req) : undefined;
        metrics?.observeHttp(req.method, route ?? UNMATCHED_ROUTE, res.statusCode, seconds);
        if (span) {
          if (route) {
            span.updateName(`${req.method} ${route}`);
            span.setAttribute('http.route', route);
          }
          span.setAttribute('http.response.status_code', res.statusCode);
          if (req.ctx.principal) span.setAttribute('guard.org_id', req.ctx.principal.org_id);
          if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
        if (!accessLog) return;
        logger.info(
          {
            request_id: requestId,
            trace_id: traceId,
            org_id: req.ctx.principal?.org_id,
            method: req.method,
            route,
            path: req.originalUrl.split('?')[0],
            status: res.statusCode,
            duration_ms: seconds * 1e3,
          },
          'request',
        );
      });
    }
    // A connection that closes before the response finished still ends the span.
    if (span) res.on('close', () => span.isRecording() && span.end());
    if (span) otelContext.with(otelTrace.setSpan(otelContext.active(), span), next);
    else next();
  };
}

export function requirePrincipal(req: Request): Principal {
  const p = req.ctx.principal;
  if (!p) throw new Error('route mounted without authentication');
  return p;
}
