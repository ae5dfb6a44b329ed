import type { Policy, Principal, VersionOperation } from '../types.js';
import { diffJson } from '../json-diff.js';
import { requireAdmin, type PolicyDeps } from './deps.js';
import { contentFromInput, type PolicyInput } from './policy-content.js';

export async function createPolicy(
  deps: PolicyDeps,
  principal: Principal,
  input: PolicyInput,
  operation: VersionOperation = 'create',
  /** Ids made elsewhere (a job derives them from its id, so that a retry writes the same rows). */
  ids?: { policy: string; version: string },
): Promise<Policy> {
  requireAdmin(principal);
  const content = contentFromInput(input);
  const now = deps.now().toISOString();
  const policy: Policy = {
    ...content,
    id: ids?.policy ?? deps.newId(),
    org_id: principal.org_id,
    is_preset: false,
    created_at: now,
    updated_at: now,
  };
  await deps.policies.insert(policy, {
    id: ids?.version ?? deps.newId(),
    policy_id: policy.id,
    org_id: principal.org_id,
    operation,
    timestamp: now,
    user_id: principal.user_id,
    diff: diffJson({}, content),
  });
  return policy;
}
