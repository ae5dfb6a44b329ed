import { notFound } from '@guard/platform';
import { findPreset } from '../presets.js';
import type { OrgStore, PolicyStore } from '../ports.js';

export interface SetDefaultPolicyDeps {
  orgs: OrgStore;
  policies: PolicyStore;
}

/**
 * Make a policy the org's default (what monitor applies when a call names none), or clear it
 * with `null`. Only a policy the org can read is accepted: one of its own or a preset. Another
 * org's policy, or an id that does not exist, would make monitor fall back silently.
 */
export async function setDefaultPolicy(
  deps: SetDefaultPolicyDeps,
  orgId: string,
  policyId: string | null,
): Promise<void> {
  if (!(await deps.orgs.get(orgId))) throw notFound(`Org ${orgId}`);
  if (policyId !== null && !findPreset(policyId) && !(await deps.policies.get(orgId, policyId))) {
    throw notFound(`Policy ${policyId} (it must be a policy of org ${orgId} or a preset)`);
  }
  await deps.orgs.setDefaultPolicy(orgId, policyId);
}
