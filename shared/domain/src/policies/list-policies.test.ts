import { describe, expect, it } from 'vitest';
import { newId } from '@guard/platform';
// Imported by path: the package index also loads the SQLite, Kafka and Temporal code.
import { MemoryPolicyStore } from '@guard/adapters/memory/memory-policy-store';
import type { PolicyListRequest, PolicyPage } from '../ports.js';
import { PRESET_POLICIES } from '../presets.js';
import type { Principal } from '../types.js';
import { createPolicy } from './create-policy.js';
import type { PolicyDeps } from './deps.js';
import { listPolicies } from './list-policies.js';

const admin: Principal = {
  org_id: 'org-a',
  org_kind: 'standard',
  user_id: 'admin',
  key_id: 'key-admin',
  role: 'admin',
  staff: false,
};

/** Counts how many policies the verb reads from the store. */
class CountingStore extends MemoryPolicyStore {
  read = 0;

  override async list(orgId: string, request: PolicyListRequest): Promise<PolicyPage> {
    const page = await super.list(orgId, request);
    this.read += page.items.length;
    return page;
  }
}

describe('listPolicies over a cursor-paged store', () => {
  it('cuts offset pages across store pages and into the presets', async () => {
    const store = new CountingStore();
    let clock = Date.parse('2026-04-01T00:00:00Z');
    const deps: PolicyDeps = { policies: store, newId, now: () => new Date((clock += 1000)) };
    // More than two store pages of org policies; made oldest first, so listed newest first.
    const made: string[] = [];
    for (let i = 0; i < 230; i++)
      made.push((await createPolicy(deps, admin, { name: `p${i}` })).id);
    const everything = [...made.reverse(), ...PRESET_POLICIES.map((p) => p.id)];
    const total = everything.length;

    for (const [offset, limit] of [
      [0, 10],
      [95, 10],
      [99, 102],
      [225, 10],
      [230, 2],
      [total - 1, 5],
      [total + 3, 5],
      [0, null],
      [150, null],
    ] as const) {
      store.read = 0;
      const list = await listPolicies(deps, admin, limit, offset);
      const expected = everything.slice(offset, limit === null ? undefined : offset + limit);
      expect(
        list.policies.map((p) => p.id),
        `offset ${offset}, limit ${limit}`,
      ).toEqual(expected);
      expect(list.total).toBe(total);
      expect(list.has_more).toBe(limit !== null && offset + expected.length < total);
      // Reaching an offset reads the policies before it, but never past the page asked for.
      expect(store.read).toBeLessThanOrEqual(Math.min(230, limit === null ? 230 : offset + limit));
    }
  });
});
