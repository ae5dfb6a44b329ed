import { createApiKey, type AuthDeps } from '../auth/api-keys.js';
import type { Principal, Role } from '../types.js';
import { requireOrgAdmin, requireStaff } from './org-access.js';
import { orgKeyView, type OrgKeyView } from './org-key-view.js';

export interface CreateOrgKeyInput {
  /** Defaults to the caller's user id. */
  user_id?: string | undefined;
  role?: Role | undefined;
  name?: string | undefined;
  staff?: boolean | undefined;
}

/**
 * A new key for an org: by an admin of that org, or by staff for any org. Only staff may make
 * another staff key. The key is in this answer only; the store keeps its hash.
 */
export async function createOrgKey(
  deps: AuthDeps,
  principal: Principal,
  orgId: string,
  input: CreateOrgKeyInput,
): Promise<OrgKeyView & { key: string }> {
  requireOrgAdmin(principal, orgId);
  if (input.staff) requireStaff(principal);
  const { key, record } = await createApiKey(deps, {
    orgId,
    userId: input.user_id ?? principal.user_id,
    role: input.role ?? 'member',
    staff: input.staff ?? false,
    name: input.name ?? '',
  });
  return { ...orgKeyView(record), key };
}
