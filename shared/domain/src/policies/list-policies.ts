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

/** How many policies one store read asks for. */
const STORE_PAGE = 100;

/**
 * Org policies, most recently updated first, then the presets (which are never updated, so they
 * always sort last). Pages are cut across both.
 *
 * The endpoint pages by offset; the store pages by cursor (wide-column stores have no OFFSET),
 * so an offset is reached by reading the policies before it. Orgs hold few policies, and the
 * total comes from the store's per-org count, not from reading them all.
 */
export async function listPolicies(
  deps: PolicyDeps,
  principal: Principal,
  limit: number | null,
  offset: number,
): Promise<PolicyList> {
  const orgTotal = await deps.policies.count(principal.org_id);
  const total = orgTotal + PRESET_POLICIES.length;
  const end = limit === null ? total : Math.min(total, offset + limit);
  const orgEnd = Math.min(end, orgTotal);
  const items =
    offset < orgEnd ? (await firstLive(deps, principal.org_id, orgEnd)).slice(offset) : [];
  const room = end - offset - items.length;
  if (room > 0) {
    const presetStart = Math.max(0, offset - orgTotal);
    items.push(...PRESET_POLICIES.slice(presetStart, presetStart + room));
  }
  return {
    policies: items,
    total,
    limit,
    offset,
    has_more: limit !== null && offset + items.length < total,
  };
}

/** The first `n` live policies of the org in list order, read page by page. */
async function firstLive(deps: PolicyDeps, orgId: string, n: number): Promise<Policy[]> {
  const out: Policy[] = [];
  let cursor: string | null = null;
  while (out.length < n) {
    const page = await deps.policies.list(orgId, {
      limit: Math.min(STORE_PAGE, n - out.length),
      cursor,
    });
    out.push(...page.items);
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  return out;
}

/** Every policy the org can see, for export. */
export async function listAllPolicies(deps: PolicyDeps, principal: Principal): Promise<Policy[]> {
  return (await listPolicies(deps, principal, null, 0)).policies;
}
