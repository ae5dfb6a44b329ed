import { PRESET_POLICIES } from '../presets.js';
import type { Policy, Principal } from '../types.js';
import type { PolicyDeps } from './deps.js';

export interface PolicyList {
  policies: Policy[];
  total: number;
  limit: number | null;
  offset: number;
  has_more: boolean;
}

/**
 * Org policies, most recently updated first, then the presets (which are never updated, so they
 * always sort last). Pages are cut across both.
 */
export async function listPolicies(
  deps: PolicyDeps,
  principal: Principal,
  limit: number | null,
  offset: number,
): Promise<PolicyList> {
  const page = await deps.policies.list(principal.org_id, { limit, offset });
  const total = page.total + PRESET_POLICIES.length;
  const items = [...page.items];
  const room = limit === null ? Infinity : limit - items.length;
  if (room > 0) {
    const presetStart = Math.max(0, offset - page.total);
    items.push(
      ...PRESET_POLICIES.slice(presetStart, presetStart + Math.min(room, PRESET_POLICIES.length)),
    );
  }
  return {
    policies: items,
    total,
    limit,
    offset,
    has_more: limit !== null && offset + items.length < total,
  };
}

/** Every policy the org can see, for export. */
export async function listAllPolicies(deps: PolicyDeps, principal: Principal): Promise<Policy[]> {
  return (await listPolicies(deps, principal, null, 0)).policies;
}
