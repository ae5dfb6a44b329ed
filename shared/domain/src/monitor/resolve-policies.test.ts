import { describe, expect, it } from 'vitest';
import { newId } from '@guard/platform';
// Imported by path: the package index also loads the SQLite, Kafka and Temporal code.
import { MemoryOrgStore } from '@guard/adapters/memory/memory-org-store';
import { MemoryPolicyStore } from '@guard/adapters/memory/memory-policy-store';
import { createPolicy } from '../policies/create-policy.js';
import { updatePolicy } from '../policies/update-policy.js';
import type { Principal } from '../types.js';
import { policyScoreFields, resolvePolicies } from './resolve-policies.js';

const admin: Principal = {
  org_id: 'org-a',
  org_kind: 'standard',
  user_id: 'u1',
  key_id: 'k1',
  role: 'admin',
  staff: false,
};

describe('the policy revision a score request carries', () => {
  it('names the stored policies when rules and scanners are theirs alone, and changes with a write', async () => {
    const deps = {
      policies: new MemoryPolicyStore(),
      orgs: new MemoryOrgStore(),
      newId,
      now: () => new Date(),
    };
    const p = await createPolicy(deps, admin, { name: 'p', rules: { r: 'No weapons.' } });
    const resolved = await resolvePolicies(deps, admin, { policy_id: p.id, inline: [] });
    expect(resolved.policy_revision).toBe(`${p.id}@${p.updated_at}`);
    expect(policyScoreFields(resolved).policy_revision).toBe(resolved.policy_revision);

    const updated = await updatePolicy(deps, admin, p.id, { rules: { r: 'No guns.' } });
    const again = await resolvePolicies(deps, admin, { policy_id: p.id, inline: [] });
    expect(again.policy_revision).toBe(`${p.id}@${updated.updated_at}`);
    expect(again.policy_revision).not.toBe(resolved.policy_revision);

    // The preset used when nothing is named has a revision too.
    const preset = await resolvePolicies(deps, admin, { inline: [] });
    expect(preset.policy_revision).toMatch(/^0{23}1@/);
  });

  it('is absent when the request adds rules or scanner settings of its own', async () => {
    const deps = { policies: new MemoryPolicyStore(), orgs: new MemoryOrgStore() };
    const inline = await resolvePolicies(deps, admin, {
      inline: [{ name: 'x', description: 'No cats.' }],
    });
    expect(inline.policy_revision).toBeUndefined();
    expect('policy_revision' in policyScoreFields(inline)).toBe(false);
    const scanners = await resolvePolicies(deps, admin, { inline: [], scanner_configs: {} });
    expect(scanners.policy_revision).toBeUndefined();
  });
});
