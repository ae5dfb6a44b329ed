import { notFound } from '@guard/platform';
import { findPreset } from '../presets.js';
import type { Policy, PolicyVersion, Principal } from '../types.js';
import { revertDiff } from '../json-diff.js';
import type { PolicyDeps } from './deps.js';
import { contentOf } from './policy-content.js';

export interface VersionList {
  policy_id: string;
  versions: Omit<PolicyVersion, 'org_id' | 'policy_id'>[];
  total: number;
}

export async function listPolicyVersions(
  deps: PolicyDeps,
  principal: Principal,
  policyId: string,
): Promise<VersionList> {
  if (findPreset(policyId)) return { policy_id: policyId, versions: [], total: 0 };
  const state = await deps.policies.getLastState(principal.org_id, policyId);
  if (!state) throw notFound('Policy');
  const versions = await deps.policies.listVersions(principal.org_id, policyId);
  return {
    policy_id: policyId,
    versions: versions.map(({ id, operation, timestamp, user_id, diff }) => ({
      id,
      operation,
      timestamp,
      user_id,
      diff,
    })),
    total: versions.length,
  };
}

export interface PolicyAtVersion {
  id: string;
  policy_id: string;
  operation: string;
  timestamp: string;
  user_id: string;
  policy_state: Policy;
}

/**
 * The policy as it was right after `versionId`: start from the last stored state and undo the
 * diffs of every newer version, newest first.
 */
export async function getPolicyAtVersion(
  deps: PolicyDeps,
  principal: Principal,
  policyId: string,
  versionId: string,
): Promise<PolicyAtVersion> {
  const state = await deps.policies.getLastState(principal.org_id, policyId);
  if (!state) throw notFound('Policy');
  const versions = await deps.policies.listVersions(principal.org_id, policyId);
  const index = versions.findIndex((v) => v.id === versionId);
  const target = versions[index];
  if (!target) throw notFound('Policy version');
  let content = contentOf(state.policy);
  for (const v of versions.slice(0, index)) content = revertDiff(content, v.diff);
  return {
    id: target.id,
    policy_id: policyId,
    operation: target.operation,
    timestamp: target.timestamp,
    user_id: target.user_id,
    policy_state: {
      ...content,
      id: policyId,
      org_id: state.policy.org_id,
      is_preset: false,
      created_at: state.policy.created_at,
      updated_at: target.timestamp,
    },
  };
}
