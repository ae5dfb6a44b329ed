import type { Org, Principal } from '../types.js';
import { getOrg } from './get-org.js';
import { requireOrgAdmin } from './org-access.js';
import { setDefaultPolicy, type SetDefaultPolicyDeps } from './set-default-policy.js';

/** setDefaultPolicy on behalf of a caller: an admin of the org, or staff. Answers the org. */
export async function setOrgDefaultPolicy(
  deps: SetDefaultPolicyDeps,
  principal: Principal,
  orgId: string,
  policyId: string | null,
): Promise<Org> {
  requireOrgAdmin(principal, orgId);
  await setDefaultPolicy(deps, orgId, policyId);
  return getOrg(deps, principal, orgId);
}
