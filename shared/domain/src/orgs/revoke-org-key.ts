import { notFound } from '@guard/platform';
import { revokeApiKey, type AuthDeps } from '../auth/api-keys.js';
import type { Principal } from '../types.js';
import { requireOrgAdmin } from './org-access.js';

/**
 * Revoke one of the org's keys (idempotent: revoking twice keeps the first time). A key of
 * another org answers 404 like a key that does not exist. Through a caching key store the
 * revocation applies at once in this process; other processes may accept the key until their
 * cache entry expires (GUARD_AUTH_CACHE_TTL_MS).
 */
export async function revokeOrgKey(
  deps: AuthDeps,
  principal: Principal,
  orgId: string,
  keyId: string,
): Promise<{ id: string; revoked: true }> {
  requireOrgAdmin(principal, orgId);
  const record = await deps.keys.get(keyId);
  if (!record || record.org_id !== orgId) throw notFound('API key');
  await revokeApiKey(deps, keyId);
  return { id: keyId, revoked: true };
}
