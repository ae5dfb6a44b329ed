import type { OrgStore } from '../ports.js';
import type { Org, Principal } from '../types.js';
import { requireStaff } from './org-access.js';

/** Every organization, oldest first: staff only. */
export async function listOrgs(deps: { orgs: OrgStore }, principal: Principal): Promise<Org[]> {
  requireStaff(principal);
  return deps.orgs.list();
}
