import { notFound } from '@guard/platform';
import { findPreset } from '../presets.js';
import type { Principal } from '../types.js';
import { requireAdmin, type PolicyDeps } from './deps.js';
import { presetReadOnly } from './update-policy.js';
import { writeWithRetry } from './write-with-retry.js';

export async function deletePolicy(
  deps: PolicyDeps,
  principal: Principal,
  policyId: string,
): Promise<{ id: string; deleted: true }> {
  requireAdmin(principal);
  if (findPreset(policyId)) throw presetReadOnly();
  // Compare-and-set like updates, so that the delete version comes after every update that
  // landed; of two concurrent deletes one answers 404 on its retry.
  return writeWithRetry(async () => {
    const state = await deps.policies.getLastState(principal.org_id, policyId);
    if (!state || state.deleted) throw notFound('Policy');
    // The content does not change on delete, so the diff is empty: reading this version back
    // gives the policy as it was when it was deleted.
    const write = await deps.policies.markDeleted(
      principal.org_id,
      policyId,
      {
        id: deps.newId(),
        policy_id: policyId,
        org_id: principal.org_id,
        operation: 'delete',
        timestamp: deps.now().toISOString(),
        user_id: principal.user_id,
        diff: [],
      },
      state.revision,
    );
    return { write, value: { id: policyId, deleted: true as const } };
  });
}
