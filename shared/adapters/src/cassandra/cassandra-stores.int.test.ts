import { Client } from 'cassandra-driver';
import { diesBefore, heldBefore } from '@guard/testing/cassandra-faults';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Policy, PolicyStore } from '@guard/domain';
import { newId } from '@guard/platform';
import {
  aKey,
  anOrg,
  aPolicy,
  apiKeyStoreContract,
  aVersion,
  orgStoreContract,
  policyStoreContract,
  readPolicyNames,
} from '@guard/testing';
import { CassandraApiKeyStore } from './cassandra-api-key-store.js';
import { CassandraOrgStore } from './cassandra-org-store.js';
import { CassandraPolicyStore } from './cassandra-policy-store.js';
import { migrateCassandra, type CassandraMigrateResult } from './migrate.js';

// One keyspace for the file and run, made once (DDL is slow) and dropped afterwards.
const keyspace = `int_config_${process.pid}_${Date.now().toString(36)}`;
const ORG_TABLES = ['orgs', 'org_directory'];
const KEY_TABLES = ['api_keys', 'api_keys_by_id', 'api_keys_by_org'];
const POLICY_TABLES = ['policies', 'policies_by_org'];

let client: Client;
let migrated: CassandraMigrateResult;

beforeAll(async () => {
  const { cassandraContactPoints, cassandraLocalDc } = inject('engines');
  client = new Client({ contactPoints: cassandraContactPoints, localDataCenter: cassandraLocalDc });
  await client.connect();
  migrated = await migrateCassandra(client, { keyspace });
});

afterAll(async () => {
  await client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
  await client?.shutdown();
});

/**
 * The contract suites name their orgs ('org-a') and ask whether any key exists at all, so each
 * case starts from empty tables: TRUNCATE is fast, unlike creating tables. The tests further
 * down use orgs of their own instead.
 */
async function emptied(tables: string[]): Promise<void> {
  for (const table of tables) await client.execute(`TRUNCATE ${keyspace}.${table}`);
}

orgStoreContract('cassandra', async () => {
  await emptied(ORG_TABLES);
  return new CassandraOrgStore(client, { keyspace });
});
apiKeyStoreContract('cassandra', async () => {
  await emptied([...KEY_TABLES, ...ORG_TABLES]);
  return {
    keys: new CassandraApiKeyStore(client, { keyspace }),
    orgs: new CassandraOrgStore(client, { keyspace }),
  };
});
policyStoreContract('cassandra', async () => {
  await emptied(POLICY_TABLES);
  return new CassandraPolicyStore(client, { keyspace });
});

const REMOVE_POSITION = /DELETE FROM \w+\.policies_by_org/;
const COMPARE_AND_SET = /UPDATE \w+\.policies SET/;

const readAll = (store: PolicyStore, orgId: string, limit: number) =>
  readPolicyNames(store, orgId, limit, 1_000);

/** The rows of the org's list index, as `updated_at policy_id`. */
async function positions(orgId: string): Promise<string[]> {
  const rs = await client.execute(
    `SELECT updated_at, policy_id FROM ${keyspace}.policies_by_org WHERE org_id = ?`,
    [orgId],
    { prepare: true },
  );
  return rs.rows.map((r) => `${r.get('updated_at') as string} ${r.get('policy_id') as string}`);
}

const at = (s: number) => new Date(Date.parse('2026-05-01T00:00:00Z') + s * 1000).toISOString();
const pos = (p: Policy) => `${p.updated_at} ${p.id}`;

describe('CassandraPolicyStore (real node)', () => {
  const store = () => new CassandraPolicyStore(client, { keyspace });

  it('is applied by the migrator as 002_config.cql', () => {
    expect(migrated.applied).toContain('002_config.cql');
  });

  it('lists a policy once, at its new place, when a write died after its compare-and-set', async () => {
    const org = `org-${newId()}`;
    const [p0, p1, p2] = [0, 1, 2].map((i) => aPolicy(org, { name: `p${i}`, updated_at: at(i) }));
    for (const p of [p0!, p1!, p2!]) await store().insert(p, aVersion(p));
    // p0 moves to the top; the process dies before taking its old row out of the list.
    const moved = { ...p0!, name: 'p0-moved', updated_at: at(10) };
    const dying = new CassandraPolicyStore(diesBefore(client, REMOVE_POSITION), { keyspace });
    await expect(dying.replace(moved, aVersion(moved), 0)).rejects.toThrow(/died before/);
    expect(await positions(org)).toContain(pos(p0!));

    for (const limit of [1, 2, 3, 10]) {
      expect(await readAll(store(), org, limit)).toEqual(['p0-moved', 'p2', 'p1']);
    }
    expect(await store().count(org)).toBe(3);
    // The reader took the stale row out.
    expect((await positions(org)).sort()).toEqual([moved, p1!, p2!].map(pos).sort());
    expect((await store().getLastState(org, p0!.id))?.revision).toBe(1);
  });

  it('keeps a policy at its old place when a write died before its compare-and-set', async () => {
    const org = `org-${newId()}`;
    const [p0, p1] = [0, 1].map((i) => aPolicy(org, { name: `p${i}`, updated_at: at(i) }));
    for (const p of [p0!, p1!]) await store().insert(p, aVersion(p));
    const never = { ...p0!, name: 'never', updated_at: at(10) };
    const dying = new CassandraPolicyStore(diesBefore(client, COMPARE_AND_SET), { keyspace });
    await expect(dying.replace(never, aVersion(never), 0)).rejects.toThrow(/died before/);
    // Its new row was written first and points at a state that never came.
    expect(await positions(org)).toContain(pos(never));

    expect(await readAll(store(), org, 1)).toEqual(['p1', 'p0']);
    expect(await store().count(org)).toBe(2);
    expect(await store().get(org, p0!.id)).toEqual(p0);
    expect((await store().listVersions(org, p0!.id)).map((v) => v.operation)).toEqual(['create']);

    // The next write from the same revision lands, and the dead writer's row goes with it.
    const next = { ...p0!, name: 'p0-next', updated_at: at(20) };
    expect(await store().replace(next, aVersion(next, { operation: 'update' }), 0)).toEqual({
      ok: true,
      revision: 1,
    });
    expect(await readAll(store(), org, 5)).toEqual(['p0-next', 'p1']);
    expect((await positions(org)).sort()).toEqual([next, p1!].map(pos).sort());
  });

  it('never takes out the row of a write still on its way while reading past it', async () => {
    const org = `org-${newId()}`;
    const [p0, p1] = [0, 1].map((i) => aPolicy(org, { name: `p${i}`, updated_at: at(i) }));
    for (const p of [p0!, p1!]) await store().insert(p, aVersion(p));
    // A writer that has written its new row and waits before its compare-and-set.
    const held = heldBefore(client, COMPARE_AND_SET);
    const slow = new CassandraPolicyStore(held.client, { keyspace });
    const moved = { ...p0!, name: 'p0-moved', updated_at: at(10) };
    const write = slow.replace(moved, aVersion(moved, { operation: 'update' }), 0);
    await held.reached;
    // A reader now sees a row whose state is not there yet: it skips it and leaves it.
    expect(await readAll(store(), org, 1)).toEqual(['p1', 'p0']);
    expect(await store().count(org)).toBe(2);
    expect(await positions(org)).toContain(pos(moved));
    held.release();
    expect(await write).toEqual({ ok: true, revision: 1 });
    expect(await readAll(store(), org, 1)).toEqual(['p0-moved', 'p1']);
    expect((await positions(org)).sort()).toEqual([moved, p1!].map(pos).sort());
  });

  it('lets one of eight writers from one revision land and leaves one row for the policy', async () => {
    const org = `org-${newId()}`;
    const p = aPolicy(org, { name: 'start', updated_at: at(0) });
    const created = aVersion(p);
    await store().insert(p, created);
    const writes = Array.from({ length: 8 }, (_, i) => {
      const policy = { ...p, name: `w${i}`, updated_at: at(10 + i) };
      return { policy, version: aVersion(policy, { operation: 'update' }) };
    });
    const results = await Promise.all(writes.map((w) => store().replace(w.policy, w.version, 0)));
    const won = results.flatMap((r, i) => (r.ok ? [i] : []));
    expect(won).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toHaveLength(7);
    const winner = writes[won[0]!]!;
    expect(await store().get(org, p.id)).toEqual(winner.policy);
    expect((await store().listVersions(org, p.id)).map((v) => v.id)).toEqual([
      winner.version.id,
      created.id,
    ]);
    // The losers took their rows back; the winner took out the old one.
    expect(await positions(org)).toEqual([pos(winner.policy)]);
    expect(await readAll(store(), org, 1)).toEqual([winner.policy.name]);
  });

  it('pages in order past many stale rows, and a read removes them', async () => {
    const org = `org-${newId()}`;
    const ps = Array.from({ length: 120 }, (_, i) =>
      aPolicy(org, { name: `p${String(i).padStart(3, '0')}`, updated_at: at(i % 40) }),
    );
    const s = store();
    for (let i = 0; i < ps.length; i += 20) {
      await Promise.all(ps.slice(i, i + 20).map((p) => s.insert(p, aVersion(p))));
    }
    // Policies deleted by a process that died before taking their rows out of the list.
    const dying = new CassandraPolicyStore(diesBefore(client, REMOVE_POSITION), { keyspace });
    const deleteDying = async (gone: Policy[]) => {
      for (const p of gone) {
        await expect(
          dying.markDeleted(org, p.id, aVersion(p, { operation: 'delete' }), 0),
        ).rejects.toThrow(/died before/);
      }
    };
    const order = (live: Policy[]) =>
      [...live]
        .sort((a, b) =>
          a.updated_at === b.updated_at
            ? b.id.localeCompare(a.id)
            : b.updated_at.localeCompare(a.updated_at),
        )
        .map((p) => p.name);

    await deleteDying(ps.filter((_, i) => i % 2 === 1));
    expect(await positions(org)).toHaveLength(120);
    let live = ps.filter((_, i) => i % 2 === 0);
    expect(await readAll(store(), org, 7)).toEqual(order(live));
    expect(await positions(org)).toHaveLength(60);

    await deleteDying(live.filter((_, i) => i % 3 === 0));
    live = live.filter((_, i) => i % 3 !== 0);
    expect(await positions(org)).toHaveLength(60);
    expect(await store().count(org)).toBe(40);
    expect(await positions(org)).toHaveLength(40);
    for (const limit of [40, 100]) expect(await readAll(store(), org, limit)).toEqual(order(live));
  });

  it('refuses a known id, also from another org, without disturbing the policy that has it', async () => {
    const org = `org-${newId()}`;
    const other = `org-${newId()}`;
    const p = aPolicy(org, { updated_at: at(1) });
    await store().insert(p, aVersion(p));
    const same = { ...p, name: 'again', updated_at: at(2) };
    await expect(store().insert(same, aVersion(same))).rejects.toThrow(/exists/);
    const elsewhere = { ...p, org_id: other, updated_at: at(3) };
    await expect(store().insert(elsewhere, aVersion(elsewhere))).rejects.toThrow(/exists/);
    expect(await store().get(org, p.id)).toEqual(p);
    expect(await store().get(other, p.id)).toBeNull();
    expect(await store().listVersions(org, p.id)).toHaveLength(1);
    expect(await positions(org)).toEqual([pos(p)]);
    expect(await positions(other)).toEqual([]);
    expect(await store().list(other, { limit: 5 })).toEqual({ items: [], nextCursor: null });
  });
});

describe('CassandraApiKeyStore (real node)', () => {
  const keys = () => new CassandraApiKeyStore(client, { keyspace });

  it('refuses a duplicate hash or id and leaves the key that has it, and its id reusable', async () => {
    const org = `org-${newId()}`;
    const k = aKey(org);
    await keys().create(k);
    const sameHash = aKey(org, { key_hash: k.key_hash, name: 'copy' });
    await expect(keys().create(sameHash)).rejects.toThrow(/duplicate/);
    const sameId = aKey(org, { id: k.id, name: 'copy' });
    await expect(keys().create(sameId)).rejects.toThrow(/duplicate/);
    expect(await keys().findByHash(k.key_hash)).toEqual(k);
    expect(await keys().findByHash(sameId.key_hash)).toBeNull();
    expect(await keys().get(k.id)).toEqual(k);
    expect(await keys().get(sameHash.id)).toBeNull();
    expect(await keys().listByOrg(org)).toEqual([k]);
    expect(await keys().revoke(sameHash.id, at(1))).toBe(false);
    expect((await keys().findByHash(k.key_hash))?.revoked_at).toBeNull();
    // The refused create gave its id back.
    const retry = aKey(org, { id: sameHash.id });
    await keys().create(retry);
    expect(await keys().get(retry.id)).toEqual(retry);
  });

  it('shows a revocation through every lookup at once', async () => {
    const org = `org-${newId()}`;
    const [a, b] = [aKey(org), aKey(org)];
    await keys().create(a);
    await keys().create(b);
    expect(await keys().revoke(a.id, at(1))).toBe(true);
    expect((await keys().findByHash(a.key_hash))?.revoked_at).toBe(at(1));
    expect((await keys().get(a.id))?.revoked_at).toBe(at(1));
    expect((await keys().listByOrg(org)).map((k) => [k.id, k.revoked_at])).toEqual([
      [a.id, at(1)],
      [b.id, null],
    ]);
  });

  it('ignores what a create that died half-way left behind', async () => {
    const org = `org-${newId()}`;
    const live = aKey(org);
    await keys().create(live);
    const dead = aKey(org);
    const dying = new CassandraApiKeyStore(diesBefore(client, /INSERT INTO \w+\.api_keys \(/), {
      keyspace,
    });
    await expect(dying.create(dead)).rejects.toThrow(/died before/);
    expect(await keys().get(dead.id)).toBeNull();
    expect(await keys().findByHash(dead.key_hash)).toBeNull();
    expect(await keys().listByOrg(org)).toEqual([live]);
    expect(await keys().revoke(dead.id, at(1))).toBe(false);

    // Refused for a duplicate hash, and died before handing its pointers back: they lead to
    // another key's record, which no lookup by the refused id may return or revoke.
    const dup = aKey(org, { key_hash: live.key_hash });
    const stuck = new CassandraApiKeyStore(diesBefore(client, /DELETE FROM \w+\.api_keys_by_org/), {
      keyspace,
    });
    await expect(stuck.create(dup)).rejects.toThrow(/died before/);
    expect(await keys().get(dup.id)).toBeNull();
    expect(await keys().listByOrg(org)).toEqual([live]);
    expect(await keys().revoke(dup.id, at(2))).toBe(false);
    expect(await keys().findByHash(live.key_hash)).toEqual(live);
  });
});

describe('CassandraOrgStore (real node)', () => {
  const orgs = () => new CassandraOrgStore(client, { keyspace });

  it('refuses a known id, and changes no org that does not exist', async () => {
    const o = anOrg({ name: 'first' });
    await orgs().create(o);
    await expect(orgs().create({ ...o, name: 'second' })).rejects.toThrow(/exists/);
    expect(await orgs().get(o.id)).toEqual(o);
    const unknown = newId();
    await orgs().setDefaultPolicy(unknown, 'p1');
    expect(await orgs().get(unknown)).toBeNull();
    expect((await orgs().list()).map((x) => x.id)).not.toContain(unknown);
  });

  it('lists in id order, without an org whose create died after its directory entry', async () => {
    const dead = anOrg();
    const dying = new CassandraOrgStore(diesBefore(client, /INSERT INTO \w+\.orgs /), { keyspace });
    await expect(dying.create(dead)).rejects.toThrow(/died before/);
    const made = [anOrg(), anOrg(), anOrg()];
    for (const o of made) await orgs().create(o);
    const listed = await orgs().list();
    expect(listed.map((o) => o.id)).not.toContain(dead.id);
    expect(listed.filter((o) => made.some((m) => m.id === o.id))).toEqual(made);
    expect(listed.map((o) => o.id)).toEqual(listed.map((o) => o.id).sort());
    // Trying again works.
    await orgs().create(dead);
    expect((await orgs().list()).map((o) => o.id)).toContain(dead.id);
  });
});
