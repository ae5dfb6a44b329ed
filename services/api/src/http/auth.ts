import type { NextFunction, Request, Response } from 'express';
import { authenticate } from '@guard/domain';
import type { ApiDeps } from '../deps.js';

/**
 * Our API key may come as `Authorization: Bearer`, `x-api-key` or `x-goog-api-key`, so that the
 * official OpenAI, Anthropic and Google SDKs work with only their base URL changed.
 */
export function presentedKey(req: Request): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  for (const h of ['x-api-key', 'x-goog-api-key'] as const) {
    const v = req.headers[h];
    if (typeof v === 'string' && v.length > 0) return v.trim();
  }
  return undefined;
}

export function authMiddleware(deps: Pick<ApiDeps, 'orgs' | 'keys'>) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const principal = await authenticate(deps, presentedKey(req));
    req.ctx.principal = principal;
    req.ctx.logger = req.ctx.logger.child({ org_id: principal.org_id, key_id: principal.key_id });
    next();
  };
}
