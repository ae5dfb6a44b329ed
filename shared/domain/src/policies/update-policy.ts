import { AppError, notFound } from '@guard/platform';
import { findPreset } from '../presets.js';
import type { Policy, Principal } from '../types.js';
import { diffJson } from '../json-diff.js';
import { requireAdmin, type PolicyDeps } from './deps.js';
import { applyPatch, contentOf, type PolicyPatch } from './policy-content.js';
import { writeWithRetry } from './write-with-retry.js';

export function presetReadOnly(): AppError {
  return new AppError('PRESET_POLICY_READ_ONLY', 'Preset policies cannot be modified or deleted');
}

/**
 * Applies the patch to the policy as last stored. The write is compare-and-set on the revision
 * read: when another write lands in between, the patch is applied again to the new state, so the
 * stored diff is always against the version before it and no concurrent update is lost.
 */
export async function updatePolicy(
  deps: PolicyDeps,
  principal: Principal,
  policyId: string,
  patch: PolicyPatch,
): Promise<Policy> {
  requireAdmin(principal);
  if (findPreset(policyId)) throw presetReadOnly();
  return writeWithRetry(async () => {
    const state = await deps.policies.getLastState(principal.org_id, policyId);
    if (!state || state.deleted) throw notFound('Policy');
    const current = state.policy;
    const before = contentOf(current);
    const after = applyPatch(before, patch);
    // A no-op update still counts as an update: the caller asked for it and sees a fresh updated_at.
    const now = strictlyAfter(deps.now(), current.updated_at);
    // The new content whole (a field the patch unset is gone), on the policy's identity.
    const { id, org_id, is_preset, created_at } = current;
    const next: Policy = { id, org_id, is_preset, created_at, ...after, updated_at: now };
    const write = await deps.policies.replace(
      next,
      {
        id: deps.newId(),
        policy_id: policyId,
        org_id: principal.org_id,
        operation: 'update',
        timestamp: now,
        user_id: principal.user_id,
        diff: diffJson(before, after),
      },
      state.revision,
    );
    return { write, value: next };
  });
}

/**
 * The time of a write: now, or a millisecond after the previous write when the clock has not
 * moved past it (two writes in one millisecond, a clock step back). Every write of a policy thus
 * has its own `updated_at`, which caches of compiled policies use as the policy's revision.
 */
export function strictlyAfter(now: Date, previous: string): string {
  const prev = Date.parse(previous);
  return now.getTime() > prev ? now.toISOString() : new Date(prev + 1).toISOString();
}
