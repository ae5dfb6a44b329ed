import { describe, expect, it } from 'vitest';
import { cachingApiKeyStore, CachingOrgStore, cachingPolicyStore } from '@guard/domain';
import {
  activityStoreContract,
  aKey,
  anOrg,
  aPolicy,
  apiKeyStoreContract,
  aVersion,
  orgStoreContract,
  policyStoreContract,
} from '@guard/testing';
import { MemoryApiKeyStore } from './memory-api-key-store.js';
import { MemoryOrgStore } from './memory-org-store.js';
import { MemoryPolicyStore } from './memory-policy-store.js';
import { MemoryActivityStore } from './memory-activity-store.js';

orgStoreContract('memory', () => new MemoryOrgStore());
apiKeyStoreContract('memory', () => ({
  keys: new MemoryApiKeyStore(),
  orgs: new MemoryOrgStore(),
}));
policyStoreContract('memory', () => new MemoryPolicyStore());
activityStoreContract('memory', () => new MemoryActivityStore());
orgStoreContract(
  'caching decorator over memory',
  () => new CachingOrgStore(new MemoryOrgStore(), 60_000),
);
policyStoreContract('caching decorator over memory', () =>
  cachingPolicyStore(new MemoryPolicyStore(), 60_000),
);
apiKeyStoreContract('caching decorator over memory', () => ({
  keys: cachingApiKeyStore(new MemoryApiKeyStore(), 60_000),
  orgs: new MemoryOrgStore(),
}));

describe('caching decorators', () => {
  it('serve repeated key lookups from memory, share concurrent misses, and forget a key revoked through them', async () => {
    const inner = new MemoryApiKeyStore();
    let reads = 0;
    const counting = Object.assign(Object.create(inner) as MemoryApiKeyStore, {
      findByHash: (h: string) => {
        reads++;
        return inner.findByHash(h);
      },
    });
    const keys = cachingApiKeyStore(counting, 60_000);
    const k = aKey('org-1');
    await inner.create(k);
    await Promise.all(Array.from({ length: 10 }, () => keys.findByHash(k.key_hash)));
    await keys.findByHash(k.key_hash);
    expect(reads).toBe(1);
    await keys.revoke(k.id, new Date().toISOString());
    expect((await keys.findByHash(k.key_hash))?.revoked_at).not.toBeNull();
    // Unknown keys are not cached: a key created later works at once.
    expect(await keys.findByHash('f'.repeat(64))).toBeNull();
    const later = aKey('org-1', { key_hash: 'f'.repeat(64) });
    await inner.create(later);
    expect((await keys.findByHash('f'.repeat(64)))?.id).toBe(later.id);
  });

  it('apply a default-policy change made through the org cache at once', async () => {
    const orgs = new CachingOrgStore(new MemoryOrgStore(), 60_000);
    const o = anOrg();
    await orgs.create(o);
    expect((await orgs.get(o.id))?.default_policy_id).toBeNull();
    await orgs.setDefaultPolicy(o.id, 'p1');
    expect((await orgs.get(o.id))?.default_policy_id).toBe('p1');
  });

  it('serve policy reads from memory and drop a policy written through them at once', async () => {
    const inner = new MemoryPolicyStore();
    let reads = 0;
    const counting = Object.assign(Object.create(inner) as MemoryPolicyStore, {
      get: (o: string, id: string) => {
        reads++;
        return inner.get(o, id);
      },
    });
    const policies = cachingPolicyStore(counting, 60_000);
    const p = aPolicy('org-1');
    await policies.insert(p, aVersion(p));
    await Promise.all(Array.from({ length: 5 }, () => policies.get('org-1', p.id)));
    expect(reads).toBe(1);
    const next = { ...p, description: 'changed', updated_at: new Date().toISOString() };
    expect((await policies.replace(next, aVersion(next), 0)).ok).toBe(true);
    expect((await policies.get('org-1', p.id))?.description).toBe('changed');
    expect((await policies.markDeleted('org-1', p.id, aVersion(next), 1)).ok).toBe(true);
    expect(await policies.get('org-1', p.id)).toBeNull();
    expect(await policies.get('org-2', p.id)).toBeNull();
  });

  it('drop everything they hold when the change signal moves, for changes made around them', async () => {
    let version = 0;
    const changes = { version: () => version };
    const innerOrgs = new MemoryOrgStore();
    const innerKeys = new MemoryApiKeyStore();
    const innerPolicies = new MemoryPolicyStore();
    const orgs = new CachingOrgStore(innerOrgs, 60_000, { changes });
    const keys = cachingApiKeyStore(innerKeys, 60_000, { changes });
    const policies = cachingPolicyStore(innerPolicies, 60_000, { changes });
    const o = anOrg();
    const k = aKey(o.id);
    const p = aPolicy(o.id);
    await innerOrgs.create(o);
    await innerKeys.create(k);
    await innerPolicies.insert(p, aVersion(p));
    expect((await orgs.get(o.id))?.default_policy_id).toBeNull();
    expect((await keys.findByHash(k.key_hash))?.revoked_at).toBeNull();
    expect((await policies.get(o.id, p.id))?.description).toBe(p.description);

    // Changed behind the caches' back (another process): still cached until the signal moves.
    await innerOrgs.setDefaultPolicy(o.id, p.id);
    await innerKeys.revoke(k.id, new Date().toISOString());
    const next = { ...p, description: 'changed elsewhere' };
    expect((await innerPolicies.replace(next, aVersion(next), 0)).ok).toBe(true);
    expect((await orgs.get(o.id))?.default_policy_id).toBeNull();
    expect((await keys.findByHash(k.key_hash))?.revoked_at).toBeNull();

    version++;
    expect((await orgs.get(o.id))?.default_policy_id).toBe(p.id);
    expect((await keys.findByHash(k.key_hash))?.revoked_at).not.toBeNull();
    expect((await policies.get(o.id, p.id))?.description).toBe('changed elsewhere');
  });
});
