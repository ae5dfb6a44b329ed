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

/**
 * Resolves the presented key to the caller. Whether lookups are cached is the composition root's
 * choice: it hands in caching key and org stores (services/standalone/src/deps.ts).
 */
export function authMiddleware(deps: Pick<ApiDeps, 'orgs' | 'keys'>) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    req.ctx.principal = await authenticate(deps, presentedKey(req));
    next();
  };
}
