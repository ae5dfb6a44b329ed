import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { newId } from '@guard/platform';
// The in-memory twin passes the same contract suite as the SQLite adapter (shared/testing), so
// the verbs can be exercised here without a database. Imported by path: the package index also
// loads the SQLite, Kafka and Temporal code.
import { MemoryPolicyStore } from '@guard/adapters/memory/memory-policy-store';
import { diffJson } from '../json-diff.js';
import type { PolicyContent, Principal } from '../types.js';
import type { PolicyStore, StoredPolicy } from '../ports.js';
import { createPolicy } from './create-policy.js';
import type { PolicyDeps } from './deps.js';
import { deletePolicy } from './delete-policy.js';
import { applyPatch, contentOf, type PolicyPatch } from './policy-content.js';
import { getPolicyAtVersion, listPolicyVersions } from './policy-versions.js';
import { strictlyAfter, updatePolicy } from './update-policy.js';
import { MAX_POLICY_WRITE_ATTEMPTS } from './write-with-retry.js';

const admin = (userId: string): Principal => ({
  org_id: 'org-a',
  org_kind: 'standard',
  user_id: userId,
  key_id: `key-${userId}`,
  role: 'admin',
  staff: false,
});

/**
 * Every store call waits a random 0-2 ms first, as a networked store would: concurrent writers
 * then read and write in every interleaving, not only the one the event loop happens to give.
 */
function withLatency(store: PolicyStore): PolicyStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await sleep(Math.random() * 2);
        return value.apply(target, args);
      };
    },
  });
}

/**
 * Runs one concurrent `updatePolicy` per writer and checks that the history tells one story:
 * every update landed exactly once, each on top of the one before it, so rebuilding any version
 * from the diffs gives the state the patches produce when applied in the stored order.
 */
async function concurrentUpdates(
  store: PolicyStore,
  patches: Record<string, PolicyPatch>,
): Promise<PolicyContent> {
  const deps: PolicyDeps = { policies: store, newId, now: () => new Date() };
  const created = await createPolicy(deps, admin('creator'), {
    name: 'shared',
    rules: { base: 'no violence' },
  });
  const writers = Object.keys(patches);
  await Promise.all(writers.map((w) => updatePolicy(deps, admin(w), created.id, patches[w]!)));

  const { versions, total } = await listPolicyVersions(deps, admin('reader'), created.id);
  expect(total).toBe(writers.length + 1);
  const oldestFirst = [...versions].reverse();
  expect(oldestFirst[0]?.operation).toBe('create');
  const updaters = oldestFirst.slice(1).map((v) => v.user_id);
  expect([...updaters].sort()).toEqual([...writers].sort());

  let expected = contentOf(created);
  for (const [i, version] of oldestFirst.entries()) {
    if (i > 0) {
      const next = applyPatch(expected, patches[version.user_id]!);
      expect(version.diff, `diff of update ${i} (by ${version.user_id})`).toEqual(
        diffJson(expected, next),
      );
      expected = next;
    }
    const rebuilt = await getPolicyAtVersion(deps, admin('reader'), created.id, version.id);
    expect(contentOf(rebuilt.policy_state), `state at version ${i}`).toEqual(expected);
  }
  const final = await store.get('org-a', created.id);
  expect(final && contentOf(final)).toEqual(expected);
  return expected;
}

describe('updatePolicy under concurrent writers', () => {
  it('lands every patch of concurrent writers to different fields', async () => {
    const patches: Record<string, PolicyPatch> = {
      w1: { name: 'renamed' },
      w2: { description: 'described' },
      w3: { mode: 'prompt_injection' },
      w4: { pre_violation_threshold: 0.61 },
      w5: { pre_jb_threshold: 0.62 },
      w6: { post_violation_threshold: 0.63 },
      w7: { post_violation_jb_threshold: 0.64 },
      w8: { block_message: 'no.' },
      w9: { scanners_config: { pii: true } },
    };
    for (const store of [new MemoryPolicyStore(), withLatency(new MemoryPolicyStore())]) {
      const final = await concurrentUpdates(store, patches);
      expect(final).toMatchObject({
        name: 'renamed',
        description: 'described',
        mode: 'prompt_injection',
        pre_violation_threshold: 0.61,
        pre_jb_threshold: 0.62,
        post_violation_threshold: 0.63,
        post_violation_jb_threshold: 0.64,
        block_message: 'no.',
        scanners_config: { pii: true },
      });
    }
  });

  it('records concurrent rule changes one after the other, each diffed against the last', async () => {
    // A patch replaces the rule set whole, so the last writer's rules win; what must hold is that
    // each writer's change is one version, diffed against the rules the writer before it left.
    const patches: Record<string, PolicyPatch> = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [
        `w${i}`,
        { rules: { base: 'no violence', [`rule_${i}`]: `rule number ${i}` } },
      ]),
    );
    for (const store of [new MemoryPolicyStore(), withLatency(new MemoryPolicyStore())]) {
      const final = await concurrentUpdates(store, patches);
      expect(Object.keys(final.rules)).toHaveLength(2);
    }
  });
});

/** Another writer lands between every read of the policy and the write that follows it. */
class ContendedStore extends MemoryPolicyStore {
  reads = 0;

  override async getLastState(orgId: string, policyId: string): Promise<StoredPolicy | null> {
    const state = await super.getLastState(orgId, policyId);
    if (state && !state.deleted) {
      this.reads++;
      const other = { ...state.policy, description: `other writer ${state.revision}` };
      await super.replace(
        other,
        {
          id: newId(),
          policy_id: policyId,
          org_id: orgId,
          operation: 'update',
          timestamp: new Date().toISOString(),
          user_id: 'other',
          diff: diffJson(contentOf(state.policy), contentOf(other)),
        },
        state.revision,
      );
    }
    return state;
  }
}

describe('policy writes that keep losing the race', () => {
  it('answer CONFLICT (409) after the last attempt, having written nothing', async () => {
    const store = new ContendedStore();
    const deps: PolicyDeps = { policies: store, newId, now: () => new Date() };
    const created = await createPolicy(deps, admin('creator'), { name: 'busy' });
    store.reads = 0;
    await expect(
      updatePolicy(deps, admin('loser'), created.id, { name: 'mine' }),
    ).rejects.toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(store.reads).toBe(MAX_POLICY_WRITE_ATTEMPTS);
    await expect(deletePolicy(deps, admin('loser'), created.id)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    const { versions } = await listPolicyVersions(deps, admin('reader'), created.id);
    expect(versions.filter((v) => v.user_id === 'loser')).toEqual([]);
    expect((await store.get('org-a', created.id))?.name).toBe('busy');
  });
});

describe('deletePolicy under concurrent writers', () => {
  it('deletes once: of two concurrent deletes the other answers not found', async () => {
    const store = withLatency(new MemoryPolicyStore());
    const deps: PolicyDeps = { policies: store, newId, now: () => new Date() };
    const created = await createPolicy(deps, admin('creator'), { name: 'doomed' });
    const results = await Promise.allSettled([
      deletePolicy(deps, admin('d1'), created.id),
      deletePolicy(deps, admin('d2'), created.id),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r) => r.status === 'rejected');
    expect(rejected.map((r) => (r.reason as { code?: string }).code)).toEqual(['NOT_FOUND']);
    const { versions } = await listPolicyVersions(deps, admin('reader'), created.id);
    expect(versions.map((v) => v.operation)).toEqual(['delete', 'create']);
  });

  it('records a delete after every update that landed, and no update after it', async () => {
    const store = withLatency(new MemoryPolicyStore());
    const deps: PolicyDeps = { policies: store, newId, now: () => new Date() };
    const created = await createPolicy(deps, admin('creator'), { name: 'doomed' });
    const updates = Array.from({ length: 6 }, (_, i) =>
      updatePolicy(deps, admin(`w${i}`), created.id, { description: `by w${i}` }),
    );
    const results = await Promise.allSettled([
      ...updates,
      deletePolicy(deps, admin('deleter'), created.id),
    ]);
    expect(results.at(-1)?.status).toBe('fulfilled');
    const landed = results.slice(0, -1).filter((r) => r.status === 'fulfilled').length;
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { code?: string }).code).toBe('NOT_FOUND');
    }
    const { versions } = await listPolicyVersions(deps, admin('reader'), created.id);
    expect(versions.map((v) => v.operation)).toEqual([
      'delete',
      ...Array<string>(landed).fill('update'),
      'create',
    ]);
    const last = versions[1]!;
    const before = await getPolicyAtVersion(deps, admin('reader'), created.id, last.id);
    const atDelete = await getPolicyAtVersion(deps, admin('reader'), created.id, versions[0]!.id);
    expect(contentOf(atDelete.policy_state)).toEqual(contentOf(before.policy_state));
  });
});

describe('policy revisions', () => {
  it('give every write its own updated_at, even when the clock stands still', async () => {
    const frozen = new Date('2026-11-25T12:00:00.000Z');
    const deps: PolicyDeps = { policies: new MemoryPolicyStore(), newId, now: () => frozen };
    const created = await createPolicy(deps, admin('u1'), { name: 'p', rules: {} });
    const seen = [created.updated_at];
    for (let i = 0; i < 3; i++) {
      const next = await updatePolicy(deps, admin('u1'), created.id, { description: `v${i}` });
      seen.push(next.updated_at);
    }
    expect(new Set(seen).size).toBe(4);
    expect([...seen].sort()).toEqual(seen);
  });

  it('move on with the clock when it has passed the last write', () => {
    expect(strictlyAfter(new Date('2026-11-25T12:00:01.000Z'), '2026-11-25T12:00:00.000Z')).toBe(
      '2026-11-25T12:00:01.000Z',
    );
    expect(strictlyAfter(new Date('2026-11-25T11:00:00.000Z'), '2026-11-25T12:00:00.000Z')).toBe(
      '2026-11-25T12:00:00.001Z',
    );
  });
});
