import { notFound } from '@guard/platform';
import { findPreset } from '../presets.js';
import type { Policy, Principal } from '../types.js';
import type { PolicyDeps } from './deps.js';

/** A preset or a live policy of the caller's org; another org's policy is "not found". */
export async function getPolicy(
  deps: PolicyDeps,
  principal: Principal,
  policyId: string,
): Promise<Policy> {
  const preset = findPreset(policyId);
  if (preset) return preset;
  const policy = await deps.policies.get(principal.org_id, policyId);
  if (!policy) throw notFound('Policy');
  return policy;
}
