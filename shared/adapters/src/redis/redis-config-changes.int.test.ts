import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  announceWrites,
  cachingApiKeyStore,
  CachingOrgStore,
  cachingPolicyStore,
} from '@guard/domain';
import { aKey, anOrg, aPolicy, aVersion } from '@guard/testing';
import { MemoryApiKeyStore } from '../memory/memory-api-key-store.js';
import { MemoryOrgStore } from '../memory/memory-org-store.js';
import { MemoryPolicyStore } from '../memory/memory-policy-store.js';
import { RedisConfigChanges } from './redis-config-changes.js';

// A channel of this file's own, so parallel files and runs never hear each other.
const channel = `int:config-changes:${process.pid}:${Date.now().toString(36)}`;
const connections: Redis[] = [];
const connect = () => {
  const r = new Redis(inject('engines').redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  connections.push(r);
  return r;
};

afterAll(async () => {
  await Promise.all(connections.map((c) => c.quit().catch(() => undefined)));
});

async function until(check: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - started;
}

/** One API pod: its own caches over the shared stores, its own Redis connections. */
async function pod(shared: {
  orgs: MemoryOrgStore;
  keys: MemoryApiKeyStore;
  policies: MemoryPolicyStore;
}) {
  const publisher = connect();
  await publisher.connect();
  const changes = new RedisConfigChanges(connect(), publisher, undefined, channel);
  await changes.start();
  const announced = announceWrites(shared, () => changes.announce());
  // A TTL far longer than the test: only the notice can make a change visible.
  const ttl = 600_000;
  return {
    changes,
    orgs: new CachingOrgStore(announced.orgs, ttl, { changes }),
    keys: cachingApiKeyStore(announced.keys, ttl, { changes }),
    policies: cachingPolicyStore(announced.policies, ttl, { changes }),
  };
}

describe('config change notices over Redis pub/sub (real server)', () => {
  it('make a key revoked, a default set and a policy changed on one pod visible on another at once', async () => {
    const shared = {
      orgs: new MemoryOrgStore(),
      keys: new MemoryApiKeyStore(),
      policies: new MemoryPolicyStore(),
    };
    const a = await pod(shared);
    const b = await pod(shared);
    const o = anOrg();
    const k = aKey(o.id);
    const p = aPolicy(o.id);
    await a.orgs.create(o);
    await a.keys.create(k);
    await a.policies.insert(p, aVersion(p));
    // Pod b caches all three.
    expect((await b.keys.findByHash(k.key_hash))?.revoked_at).toBeNull();
    expect((await b.orgs.get(o.id))?.default_policy_id).toBeNull();
    expect((await b.policies.get(o.id, p.id))?.name).toBe(p.name);

    await a.keys.revoke(k.id, new Date().toISOString());
    const revokedIn = await until(
      async () => (await b.keys.findByHash(k.key_hash))?.revoked_at != null,
      1000,
    );
    await a.orgs.setDefaultPolicy(o.id, p.id);
    await until(async () => (await b.orgs.get(o.id))?.default_policy_id === p.id, 1000);
    const next = { ...p, name: 'renamed' };
    expect((await a.policies.replace(next, aVersion(next), 0)).ok).toBe(true);
    await until(async () => (await b.policies.get(o.id, p.id))?.name === 'renamed', 1000);
    expect(revokedIn).toBeLessThan(1000);
  });

  it('count a lost and regained subscription as a change, since notices sent meanwhile are lost', async () => {
    const subscriber = connect();
    const publisher = connect();
    await publisher.connect();
    const changes = new RedisConfigChanges(subscriber, publisher, undefined, channel);
    await changes.start();
    const before = changes.version();
    const id = await subscriber.client('ID');
    await publisher.client('KILL', 'ID', String(id));
    await until(async () => changes.version() !== before, 5000);
    // Subscribed again: notices arrive as before.
    const after = changes.version();
    changes.announce();
    await until(async () => changes.version() > after, 1000);
  });
});
