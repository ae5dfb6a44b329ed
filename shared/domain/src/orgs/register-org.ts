import { createOrg, type AuthDeps } from '../auth/api-keys.js';
import type { Org, OrgKind, Principal } from '../types.js';
import { requireStaff } from './org-access.js';

export interface RegisterOrgInput {
  name: string;
  kind?: OrgKind | undefined;
}

/** A new organization, made by staff over HTTP (the CLI calls createOrg on the store directly). */
export async function registerOrg(
  deps: AuthDeps,
  principal: Principal,
  input: RegisterOrgInput,
): Promise<Org> {
  requireStaff(principal);
  return createOrg(deps, input.name, input.kind ?? 'standard');
}
