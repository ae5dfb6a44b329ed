import type { AuthDeps } from '../auth/api-keys.js';
import type { Principal } from '../types.js';
import { getOrg } from './get-org.js';
import { requireOrgAdmin } from './org-access.js';
import { orgKeyView, type OrgKeyView } from './org-key-view.js';

/** The org's keys, revoked ones included, oldest first; never the keys or their hashes. */
export async function listOrgKeys(
  deps: Pick<AuthDeps, 'orgs' | 'keys'>,
  principal: Principal,
  orgId: string,
): Promise<OrgKeyView[]> {
  requireOrgAdmin(principal, orgId);
  await getOrg(deps, principal, orgId);
  return (await deps.keys.listByOrg(orgId)).map(orgKeyView);
}
