import { AppError, notFound } from '@guard/platform';
import { findPreset } from '../presets.js';
import type { Policy, Principal } from '../types.js';
import { diffJson } from '../json-diff.js';
import { requireAdmin, type PolicyDeps } from './deps.js';
import { applyPatch, contentOf, type PolicyPatch } from './policy-content.js';

export function presetReadOnly(): AppError {
  return new AppError('PRESET_POLICY_READ_ONLY', 'Preset policies cannot be modified or deleted');
}

export async function updatePolicy(
  deps: PolicyDeps,
  principal: Principal,
  policyId: string,
  patch: PolicyPatch,
): Promise<Policy> {
  requireAdmin(principal);
  if (findPreset(policyId)) throw presetReadOnly();
  const current = await deps.policies.get(principal.org_id, policyId);
  if (!current) throw notFound('Policy');
  const before = contentOf(current);
  const after = applyPatch(before, patch);
  const diff = diffJson(before, after);
  // A no-op update still counts as an update: the caller asked for it and sees a fresh updated_at.
  const now = deps.now().toISOString();
  const next: Policy = { ...current, ...after, updated_at: now };
  await deps.policies.replace(next, {
    id: deps.newId(),
    policy_id: policyId,
    org_id: principal.org_id,
    operation: 'update',
    timestamp: now,
    user_id: principal.user_id,
    diff,
  });
  return next;
}
