import { notFound } from '@guard/platform';
import { findPreset } from '../presets.js';
import type { Principal } from '../types.js';
import { requireAdmin, type PolicyDeps } from './deps.js';
import { presetReadOnly } from './update-policy.js';

export async function deletePolicy(
  deps: PolicyDeps,
  principal: Principal,
  policyId: string,
): Promise<{ id: string; deleted: true }> {
  requireAdmin(principal);
  if (findPreset(policyId)) throw presetReadOnly();
  const current = await deps.policies.get(principal.org_id, policyId);
  if (!current) throw notFound('Policy');
  // The content does not change on delete, so the diff is empty: reading this version back gives
  // the policy as it was when it was deleted.
  await deps.policies.markDeleted(principal.org_id, policyId, {
    id: deps.newId(),
    policy_id: policyId,
    org_id: principal.org_id,
    operation: 'delete',
    timestamp: deps.now().toISOString(),
    user_id: principal.user_id,
    diff: [],
  });
  return { id: policyId, deleted: true };
}
