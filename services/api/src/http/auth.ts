import type { NextFunction, Request, Response } from 'express';
import { TtlCache } from '@guard/platform';
import { authenticate, hashApiKey, type Principal } from '@guard/domain';
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
 * Resolves keys through a short-lived cache of successful lookups (keyed by the key's hash, never
 * the key), so the store is not read on every request. A revoked key stops working within the
 * cache TTL; failures are never cached.
 */
export function authMiddleware(deps: Pick<ApiDeps, 'orgs' | 'keys'>, cacheTtlMs: number) {
  const cache = new TtlCache<string, Principal>(cacheTtlMs);
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const key = presentedKey(req);
    const cacheKey = key && cacheTtlMs > 0 ? hashApiKey(key) : undefined;
    let principal = cacheKey ? cache.get(cacheKey) : undefined;
    if (!principal) {
      principal = await authenticate(deps, key);
      if (cacheKey) cache.set(cacheKey, principal);
    }
    req.ctx.principal = principal;
    next();
  };
}
