import { notFound } from '@guard/platform';
import type { OrgStore } from '../ports.js';
import type { Org, Principal } from '../types.js';
import { requireOrgReader } from './org-access.js';

/** One organization: staff, or any key of that organization. */
export async function getOrg(
  deps: { orgs: OrgStore },
  principal: Principal,
  orgId: string,
): Promise<Org> {
  requireOrgReader(principal, orgId);
  const org = await deps.orgs.get(orgId);
  if (!org) throw notFound('Organization');
  return org;
}
