import { describe, expect, it } from 'vitest';
import type { ApiKeyStore, OrgStore, PolicyStore } from '@guard/domain';
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
  make: () => Promise<{ keys: ApiKeyStore; orgs: OrgStore }> | { keys: ApiKeyStore; orgs: OrgStore },
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
      expect(await keys.count()).toBe(1);
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

export function policyStoreContract(name: string, make: () => Promise<PolicyStore> | PolicyStore): void {
  describe(`PolicyStore contract: ${name}`, () => {
    it('stores, replaces and reads a policy within its org only', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      expect(await store.get('org-a', p.id)).toEqual(p);
      expect(await store.get('org-b', p.id)).toBeNull();
      const p2 = { ...p, name: 'renamed', updated_at: new Date(Date.now() + 1000).toISOString() };
      await store.replace(p2, aVersion(p2, { operation: 'update' }));
      expect(await store.get('org-a', p.id)).toEqual(p2);
      await expect(store.replace({ ...p2, org_id: 'org-b' }, aVersion(p2))).rejects.toThrow();
    });

    it('lists live policies most recently updated first, with paging', async () => {
      const store = await make();
      const base = Date.parse('2026-03-01T00:00:00Z');
      const ps = [0, 1, 2, 3, 4].map((i) => aPolicy('org-a', { name: `p${i}`, updated_at: new Date(base + i * 1000).toISOString() }));
      for (const p of ps) await store.insert(p, aVersion(p));
      await store.insert(aPolicy('org-b'), aVersion(aPolicy('org-b')));
      const all = await store.list('org-a', { limit: null, offset: 0 });
      expect(all.total).toBe(5);
      expect(all.items.map((p) => p.name)).toEqual(['p4', 'p3', 'p2', 'p1', 'p0']);
      const page = await store.list('org-a', { limit: 2, offset: 1 });
      expect(page.items.map((p) => p.name)).toEqual(['p3', 'p2']);
      expect(page.total).toBe(5);
      expect((await store.list('org-a', { limit: 10, offset: 10 })).items).toEqual([]);
    });

    it('hides deleted policies but keeps their last state and versions', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      await store.markDeleted('org-a', p.id, aVersion(p, { operation: 'delete' }));
      expect(await store.get('org-a', p.id)).toBeNull();
      expect((await store.list('org-a', { limit: null, offset: 0 })).total).toBe(0);
      expect(await store.getLastState('org-a', p.id)).toEqual({ policy: p, deleted: true });
      expect(await store.getLastState('org-b', p.id)).toBeNull();
      expect((await store.listVersions('org-a', p.id)).map((v) => v.operation)).toEqual(['delete', 'create']);
      await expect(store.markDeleted('org-a', p.id, aVersion(p))).rejects.toThrow();
    });

    it('returns versions newest first even within one millisecond, scoped to the org', async () => {
      const store = await make();
      const p = aPolicy('org-a');
      await store.insert(p, aVersion(p));
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const v = aVersion(p, { operation: 'update', timestamp: p.updated_at, diff: [{ op: 'replace', path: '/name', old: `${i}`, new: `${i + 1}` }] });
        ids.push(v.id);
        await store.replace({ ...p, name: `${i + 1}` }, v);
      }
      const versions = await store.listVersions('org-a', p.id);
      expect(versions.slice(0, 5).map((v) => v.id)).toEqual(ids.reverse());
      expect(versions[0]?.diff).toEqual([{ op: 'replace', path: '/name', old: '4', new: '5' }]);
      expect(await store.listVersions('org-b', p.id)).toEqual([]);
    });
  });
}
