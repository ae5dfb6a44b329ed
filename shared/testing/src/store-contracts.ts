import { describe, expect, it } from 'vitest';
import type { ApiKeyStore, OrgStore, Policy, PolicyStore } from '@guard/domain';
import { aKey, anOrg, aPolicy, aVersion } from './builders.js';

/**
 * Behaviour every adapter of a port must show. Each adapter's test file calls these with a
 * factory for a fresh, empty store; the embedded and production adapters cannot drift apart.
 */

export function orgStoreContract(name: string, make: () => Promise<OrgStore> | OrgStore): void {
  describe(`OrgStore contract: ${name}`, () => {
    it('creates, reads and lists orgs', async () => {
      const store = await make();
      const a = anOrg({ name: 'a', kind: 'red_team' });
      const b = anOrg({ name: 'b' });
      await store.create(a);
      await store.create(b);
      expect(await store.get(a.id)).toEqual(a);
      expect(await store.get('ffffffffffffffffffffffff')).toBeNull();
      expect((await store.list()).map((o) => o.id).sort()).toEqual([a.id, b.id].sort());
    });

    it('sets and clears the default policy', async () => {
      const store = await make();
      const a = anOrg();
      await store.create(a);
      await store.setDefaultPolicy(a.id, 'abc');
      expect((await store.get(a.id))?.default_policy_id).toBe('abc');
      await store.setDefaultPolicy(a.id, null);
      expect((await store.get(a.id))?.default_policy_id).toBeNull();
    });
  });
}

export function apiKeyStoreContract(
  name: string,
  make: () =>
    Promise<{ keys: ApiKeyStore; orgs: OrgStore }> | { keys: ApiKeyStore; orgs: OrgStore },
): void {
  describe(`ApiKeyStore contract: ${name}`, () => {
    it('finds a key by its hash only', async () => {
      const { keys, orgs } = await make();
      const org = anOrg();
      await orgs.create(org);
      const k = aKey(org.id, { staff: true, role: 'member' });
      await keys.create(k);
      expect(await keys.findByHash(k.key_hash)).toEqual(k);
      expect(await keys.findByHash(k.key_hash.toUpperCase())).toBeNull();
      expect(await keys.findByHash(k.key_hash.slice(0, -1))).toBeNull();
      expect(await keys.get(k.id)).toEqual(k);
    });

    it('tells whether any key exists, revoked ones included', async () => {
      const { keys, orgs } = await make();
      expect(await keys.hasAnyKey()).toBe(false);
      const org = anOrg();
      await orgs.create(org);
      const k = aKey(org.id);
      await keys.create(k);
      expect(await keys.hasAnyKey()).toBe(true);
      // A store whose keys were all revoked is not empty: bootstrapping again would hand out a
      // fresh admin key to whoever restarts the server.
      await keys.revoke(k.id, '2026-01-01T00:00:00.000Z');
      expect(await keys.hasAnyKey()).toBe(true);
    });

    it('revokes once and keeps the first revocation time', async () => {
      const { keys, orgs } = await make();
      const org = anOrg();
      await orgs.create(org);
      const k = aKey(org.id);
      await keys.create(k);
      expect(await keys.revoke(k.id, '2026-01-01T00:00:00.000Z')).toBe(true);
      expect(await keys.revoke(k.id, '2027-01-01T00:00:00.000Z')).toBe(true);
      expect((await keys.get(k.id))?.revoked_at).toBe('2026-01-01T00:00:00.000Z');
      expect(await keys.revoke('ffffffffffffffffffffffff', '2026-01-01T00:00:00.000Z')).toBe(false);
    });

    it('lists keys per org', async () => {
      const { keys, orgs } = await make();
      const a = anOrg();
      const b = anOrg();
      await orgs.create(a);
      await orgs.create(b);
      await keys.create(aKey(a.id));
      await keys.create(aKey(a.id));
      await keys.create(aKey(b.id));
      expect(await keys.listByOrg(a.id)).toHaveLength(2);
      expect(await keys.listByOrg(b.id)).toHaveLength(1);
    });
  });
}

export function policyStoreContract(
  name: string,
  make: () => Promise<PolicyStore> | PolicyStore,
): void {
  describe(`PolicyStore contract: ${name}`, () => {
    const later = (p: Policy, ms: number): string =>
      new Date(Date.parse(p.updated_at) + ms).toISOString();

    it('stores, replaces and reads a policy within its org only', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      expect(await store.get('org-a', p.id)).toEqual(p);
      expect(await store.get('org-b', p.id)).toBeNull();
      const p2 = { ...p, name: 'renamed', updated_at: later(p, 1000) };
      expect(await store.replace(p2, aVersion(p2, { operation: 'update' }), 0)).toEqual({
        ok: true,
        revision: 1,
      });
      expect(await store.get('org-a', p.id)).toEqual(p2);
      expect(await store.replace({ ...p2, org_id: 'org-b' }, aVersion(p2), 1)).toEqual({
        ok: false,
        reason: 'conflict',
      });
      expect(await store.get('org-a', p.id)).toEqual(p2);
    });

    it('counts revisions from 0 on insert, one more per replace or delete', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      expect(await store.getLastState('org-a', p.id)).toEqual({
        policy: p,
        deleted: false,
        revision: 0,
      });
      const p2 = { ...p, name: 'renamed', updated_at: later(p, 1000) };
      await store.replace(p2, aVersion(p2, { operation: 'update' }), 0);
      expect((await store.getLastState('org-a', p.id))?.revision).toBe(1);
      expect(
        await store.markDeleted('org-a', p.id, aVersion(p2, { operation: 'delete' }), 1),
      ).toEqual({
        ok: true,
        revision: 2,
      });
      expect(await store.getLastState('org-a', p.id)).toEqual({
        policy: p2,
        deleted: true,
        revision: 2,
      });
    });

    it('lets exactly one of two writers that read the same revision land', async () => {
      // Two updates computed from the same state: with read-then-write both would be stored and
      // the second one's diff would be against a state that is no longer the last.
      const store = await make();
      const p = aPolicy('org-a', { name: 'start' });
      const created = aVersion(p);
      await store.insert(p, created);
      const seen = (await store.getLastState('org-a', p.id))!;
      const writes = ['a', 'b'].map((n, i) => {
        const policy = { ...seen.policy, name: n, updated_at: later(p, 1000 + i) };
        const version = aVersion(policy, {
          operation: 'update',
          diff: [{ op: 'replace', path: '/name', old: 'start', new: n }],
        });
        return { policy, version };
      });
      const results = await Promise.all(
        writes.map((w) => store.replace(w.policy, w.version, seen.revision)),
      );
      expect(results.filter((r) => r.ok)).toEqual([{ ok: true, revision: seen.revision + 1 }]);
      expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'conflict' }]);
      const winner = results[0]!.ok ? writes[0]! : writes[1]!;
      const loser = results[0]!.ok ? writes[1]! : writes[0]!;
      expect(await store.get('org-a', p.id)).toEqual(winner.policy);
      // The refused write left no version behind.
      expect((await store.listVersions('org-a', p.id)).map((v) => v.id)).toEqual([
        winner.version.id,
        created.id,
      ]);
      // Having re-read, the loser lands on top of the winner.
      const now = (await store.getLastState('org-a', p.id))!;
      expect(now.revision).toBe(seen.revision + 1);
      const retry = aVersion(loser.policy, { operation: 'update' });
      expect(await store.replace(loser.policy, retry, now.revision)).toEqual({
        ok: true,
        revision: seen.revision + 2,
      });
      expect((await store.listVersions('org-a', p.id)).map((v) => v.id)).toEqual([
        retry.id,
        winner.version.id,
        created.id,
      ]);
    });

    it('refuses a delete from a stale revision, and any write to a deleted policy', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      const p2 = { ...p, name: 'renamed', updated_at: later(p, 1000) };
      await store.replace(p2, aVersion(p2, { operation: 'update' }), 0);
      const conflict = { ok: false, reason: 'conflict' };
      const del = () => aVersion(p2, { operation: 'delete' });
      expect(await store.markDeleted('org-a', p.id, del(), 0)).toEqual(conflict);
      expect(await store.get('org-a', p.id)).toEqual(p2);
      expect(await store.markDeleted('org-b', p.id, del(), 1)).toEqual(conflict);
      expect(await store.markDeleted('org-a', p.id, del(), 1)).toEqual({ ok: true, revision: 2 });
      expect(await store.markDeleted('org-a', p.id, del(), 2)).toEqual(conflict);
      expect(await store.replace(p2, aVersion(p2, { operation: 'update' }), 2)).toEqual(conflict);
      expect((await store.listVersions('org-a', p.id)).map((v) => v.operation)).toEqual([
        'delete',
        'update',
        'create',
      ]);
    });

    it('hides deleted policies but keeps their last state and versions', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      await store.markDeleted('org-a', p.id, aVersion(p, { operation: 'delete' }), 0);
      expect(await store.get('org-a', p.id)).toBeNull();
      expect(await store.list('org-a', { limit: 10 })).toEqual({ items: [], nextCursor: null });
      expect(await store.count('org-a')).toBe(0);
      expect(await store.getLastState('org-a', p.id)).toEqual({
        policy: p,
        deleted: true,
        revision: 1,
      });
      expect(await store.getLastState('org-b', p.id)).toBeNull();
      expect((await store.listVersions('org-a', p.id)).map((v) => v.operation)).toEqual([
        'delete',
        'create',
      ]);
    });

    /** Live policies of one org at distinct times, two of them in the same millisecond. */
    async function storeWithPolicies(store: PolicyStore): Promise<Policy[]> {
      const base = Date.parse('2026-03-01T00:00:00Z');
      const at = (s: number) => new Date(base + s * 1000).toISOString();
      const ps = [0, 1, 2, 3, 4].map((i) => aPolicy('org-a', { name: `p${i}`, updated_at: at(i) }));
      ps.push(aPolicy('org-a', { name: 'p2-tie', updated_at: at(2) }));
      for (const i of [3, 5, 0, 4, 2, 1]) await store.insert(ps[i]!, aVersion(ps[i]!));
      const other = aPolicy('org-b', { updated_at: at(9) });
      await store.insert(other, aVersion(other));
      return ps;
    }

    const readAll = (store: PolicyStore, orgId: string, limit: number) =>
      readPolicyNames(store, orgId, limit, 100);

    it('pages live policies by cursor, most recently updated first (ties: higher id first)', async () => {
      const store = await make();
      await storeWithPolicies(store);
      // p2-tie was made after p2, so its id is higher.
      const order = ['p4', 'p3', 'p2-tie', 'p2', 'p1', 'p0'];
      for (const limit of [1, 2, 4, 6, 50])
        expect(await readAll(store, 'org-a', limit)).toEqual(order);
      // A page that reaches the end says so: no empty page to fetch after it.
      expect((await store.list('org-a', { limit: 6 })).nextCursor).toBeNull();
      expect((await store.list('org-a', { limit: 5 })).nextCursor).not.toBeNull();
      expect(await store.list('org-c', { limit: 5 })).toEqual({ items: [], nextCursor: null });
      expect(await store.count('org-a')).toBe(6);
      expect(await store.count('org-b')).toBe(1);
      expect(await store.count('org-c')).toBe(0);
    });

    it('keeps order and count as policies are updated and deleted', async () => {
      const store = await make();
      const ps = await storeWithPolicies(store);
      const p0 = { ...ps[0]!, updated_at: later(ps[4]!, 1000) };
      await store.replace(p0, aVersion(p0, { operation: 'update' }), 0);
      await store.markDeleted('org-a', ps[3]!.id, aVersion(ps[3]!, { operation: 'delete' }), 0);
      expect(await readAll(store, 'org-a', 2)).toEqual(['p0', 'p4', 'p2-tie', 'p2', 'p1']);
      expect(await store.count('org-a')).toBe(5);
    });

    it('continues a cursor from where it stood, even if the policy it ended on changed', async () => {
      // A cursor is a position in the order, not a reference to a row: wide-column stores page
      // by clustering key the same way.
      const store = await make();
      const ps = await storeWithPolicies(store);
      const first = await store.list('org-a', { limit: 2 });
      expect(first.items.map((p) => p.name)).toEqual(['p4', 'p3']);
      await store.markDeleted('org-a', ps[3]!.id, aVersion(ps[3]!, { operation: 'delete' }), 0);
      const p1 = { ...ps[1]!, updated_at: later(ps[4]!, 1000) };
      await store.replace(p1, aVersion(p1, { operation: 'update' }), 0);
      const rest = await store.list('org-a', { limit: 10, cursor: first.nextCursor });
      expect(rest.items.map((p) => p.name)).toEqual(['p2-tie', 'p2', 'p0']);
      expect(rest.nextCursor).toBeNull();
    });

    it('returns versions newest first even within one millisecond, scoped to the org', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const v = aVersion(p, {
          operation: 'update',
          timestamp: p.updated_at,
          diff: [{ op: 'replace', path: '/name', old: `${i}`, new: `${i + 1}` }],
        });
        ids.push(v.id);
        expect((await store.replace({ ...p, name: `${i + 1}` }, v, i)).ok).toBe(true);
      }
      const versions = await store.listVersions('org-a', p.id);
      expect(versions.slice(0, 5).map((v) => v.id)).toEqual(ids.reverse());
      expect(versions[0]?.diff).toEqual([{ op: 'replace', path: '/name', old: '4', new: '5' }]);
      expect(await store.listVersions('org-b', p.id)).toEqual([]);
    });
  });
}

/**
 * The names of an org's live policies, read page by page to the end of the cursor, checking that
 * no page is longer than `limit`; fails when more than `maxPages` pages come.
 */
export async function readPolicyNames(
  store: PolicyStore,
  orgId: string,
  limit: number,
  maxPages: number,
): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < maxPages; pages++) {
    const page = await store.list(orgId, { limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    names.push(...page.items.map((p) => p.name));
    if (page.nextCursor === null) return names;
    cursor = page.nextCursor;
  }
  throw new Error('the cursor never reached the end');
}
