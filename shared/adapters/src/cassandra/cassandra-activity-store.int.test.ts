import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Activity, ActivityQuery, ActivityStore } from '@guard/domain';
import { createIdGenerator } from '@guard/platform';
import { activityStoreContract, anActivity } from '@guard/testing';
import { CassandraActivityStore } from './cassandra-activity-store.js';
import { CASSANDRA_MIGRATIONS_DIR, migrateCassandra } from './migrate.js';

// Own keyspaces per file and run, dropped afterwards.
const run = `${process.pid}_${Date.now().toString(36)}`;
const keyspace = `int_activity_${run}`;
const created: string[] = [keyspace];
const DAY = 86_400_000;
const TABLES = ['activity_by_org_day', 'alarms_by_org_day', 'activity_days_by_org'];
// The files of infra/cassandra, in order.
const MIGRATIONS = ['001_activity.cql', '002_config.cql', '003_jobs.cql'];

let client: Client;

function newClient(): Client {
  const { cassandraContactPoints, cassandraLocalDc } = inject('engines');
  return new Client({ contactPoints: cassandraContactPoints, localDataCenter: cassandraLocalDc });
}

beforeAll(async () => {
  client = newClient();
  await client.connect();
  await migrateCassandra(client, { keyspace });
});

afterAll(async () => {
  for (const ks of created) {
    await client?.execute(`DROP KEYSPACE IF EXISTS ${ks}`).catch(() => undefined);
  }
  await client?.shutdown();
});

const MONTH = 30 * 86_400;

// Every case of the contract starts from empty tables.
activityStoreContract('cassandra', async () => {
  for (const table of TABLES) await client.execute(`TRUNCATE ${keyspace}.${table}`);
  return new CassandraActivityStore(client, { keyspace, ttlSeconds: MONTH });
});

/** Every page of a query, following the cursor; the ids seen and the number of pages. */
async function exportAll(
  store: ActivityStore,
  orgId: string,
  q: ActivityQuery,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after = q.after;
  for (let pages = 1; pages < 10_000; pages++) {
    const page = await store.list(orgId, { ...q, after });
    ids.push(...page.items.map((a) => a.id));
    if (!page.has_more) return { ids, pages };
    expect(page.items).toHaveLength(q.limit);
    after = page.items.at(-1)!.id;
  }
  throw new Error('export did not end');
}

describe('CassandraActivityStore (real node)', () => {
  it('pages across many days oldest first, reading only the days that hold data', async () => {
    const store = new CassandraActivityStore(client, { keyspace, ttlSeconds: MONTH });
    const gen = createIdGenerator();
    const base = Date.UTC(2026, 2, 1);
    // Data on 6 days out of 41; the other org writes on days in between.
    const dayOffsets = [0, 1, 5, 6, 19, 40];
    const perDay = [3, 1, 4, 2, 5, 3];
    const all: Activity[] = [];
    dayOffsets.forEach((d, i) => {
      for (let n = 0; n < perDay[i]!; n++) {
        const ms = base + d * DAY + 3_600_000 * (n + 1);
        all.push(
          anActivity('org-days', {
            id: gen(ms),
            created_at: new Date(ms).toISOString(),
            alarm: (all.length + 1) % 4 === 0 || d === 40,
          }),
        );
      }
    });
    const other = [2, 10, 41].map((d) =>
      anActivity('org-days-other', { id: gen(base + d * DAY), alarm: true }),
    );
    await store.record([...all].reverse());
    await store.record(other);
    const ids = all.map((a) => a.id);
    const alarmIds = all.filter((a) => a.alarm).map((a) => a.id);

    const execute = vi.spyOn(client, 'execute');
    try {
      const everything = await exportAll(store, 'org-days', { limit: 4 });
      expect(everything.ids).toEqual(ids);
      // 18 rows by 4: the last page holds 2 and says there is no more.
      expect(everything.pages).toBe(5);
      const daysRead = new Set(
        execute.mock.calls
          .filter(([query]) => query.includes('.activity_by_org_day'))
          .map(([, params]) => (Array.isArray(params) ? String(params[1]) : '')),
      );
      const dataDays = dayOffsets.map((d) => new Date(base + d * DAY).toISOString().slice(0, 10));
      expect([...daysRead].sort()).toEqual(dataDays);
    } finally {
      execute.mockRestore();
    }

    // One page across every day; has_more is exact at the edge.
    expect((await store.list('org-days', { limit: 18 })).has_more).toBe(false);
    expect((await store.list('org-days', { limit: 17 })).has_more).toBe(true);
    const bounded = { after: ids[2], before: ids[15], limit: 12 };
    const page = await store.list('org-days', bounded);
    expect(page.items.map((a) => a.id)).toEqual(ids.slice(3, 15));
    expect(page.has_more).toBe(false);
    expect((await store.list('org-days', { ...bounded, limit: 11 })).has_more).toBe(true);

    expect((await exportAll(store, 'org-days', { alarmOnly: true, limit: 2 })).ids).toEqual(
      alarmIds,
    );
    // Time bounds across days, exclusive.
    const since = Date.parse(all[3]!.created_at);
    const until = Date.parse(all[13]!.created_at);
    expect((await exportAll(store, 'org-days', { since, until, limit: 3 })).ids).toEqual(
      ids.slice(4, 13),
    );
    expect((await exportAll(store, 'org-days-other', { limit: 1 })).ids).toEqual(
      other.map((a) => a.id),
    );
    expect(await store.get('org-days', ids[7]!)).toEqual(all[7]);
    expect(await store.get('org-days', 'not-an-id')).toBeNull();
  });

  it('walks more days than one read of the days table returns', async () => {
    const store = new CassandraActivityStore(client, { keyspace, ttlSeconds: MONTH });
    const gen = createIdGenerator();
    const base = Date.UTC(2025, 0, 1);
    // 150 days with data, every other day: 300 calendar days.
    const all = Array.from({ length: 150 }, (_, i) => {
      const ms = base + 2 * i * DAY;
      return anActivity('org-long', {
        id: gen(ms),
        created_at: new Date(ms).toISOString(),
        alarm: i % 50 === 49,
      });
    });
    await store.record(all);
    const ids = all.map((a) => a.id);
    const one = await store.list('org-long', { limit: 200 });
    expect(one.items.map((a) => a.id)).toEqual(ids);
    expect(one.has_more).toBe(false);
    expect((await exportAll(store, 'org-long', { limit: 7 })).ids).toEqual(ids);
    expect((await exportAll(store, 'org-long', { after: ids[70], limit: 30 })).ids).toEqual(
      ids.slice(71),
    );
    const alarms = await store.list('org-long', { alarmOnly: true, limit: 2 });
    expect(alarms.items.map((a) => a.id)).toEqual([ids[49], ids[99]]);
    expect(alarms.has_more).toBe(true);
  });

  it('sets the retention TTL on every row it writes, and none when ttlSeconds is 0', async () => {
    const kept = new CassandraActivityStore(client, { keyspace, ttlSeconds: 3600 });
    const forever = new CassandraActivityStore(client, { keyspace, ttlSeconds: 0 });
    const a = anActivity('org-ttl', { alarm: true });
    const b = anActivity('org-ttl-0', { alarm: true });
    await kept.record([a]);
    await forever.record([b]);
    // Recording again keeps the first write, TTL included.
    await forever.record([a]);

    const ttl = async (table: string, x: Activity) => {
      const day = x.created_at.slice(0, 10);
      const rs = await client.execute(
        `SELECT TTL(doc) AS t FROM ${keyspace}.${table} WHERE org_id = ? AND day = ? AND id = ?`,
        [x.org_id, day, x.id],
        { prepare: true },
      );
      expect(rs.rows).toHaveLength(1);
      return rs.first().get('t') as number | null;
    };
    const dayTtl = async (x: Activity) => {
      const rs = await client.execute(
        `SELECT TTL(alarm) AS t FROM ${keyspace}.activity_days_by_org WHERE org_id = ? AND day = ?`,
        [x.org_id, x.created_at.slice(0, 10)],
        { prepare: true },
      );
      return rs.first().get('t') as number | null;
    };
    for (const table of ['activity_by_org_day', 'alarms_by_org_day']) {
      expect(await ttl(table, a)).toBeGreaterThan(3500);
      expect(await ttl(table, a)).toBeLessThanOrEqual(3600);
      expect(await ttl(table, b)).toBeNull();
    }
    // The day row outlives the day's rows.
    expect(await dayTtl(a)).toBeGreaterThan(3600);
    expect(await dayTtl(b)).toBeNull();
    expect(() => new CassandraActivityStore(client, { keyspace, ttlSeconds: -1 })).toThrow(
      /ttlSeconds/,
    );
  });

  it('writes 10,000 records over 3 days and exports them by pages of 1,000', async () => {
    const store = new CassandraActivityStore(client, { keyspace, ttlSeconds: MONTH });
    const gen = createIdGenerator();
    const base = Date.UTC(2026, 9, 1);
    const n = 10_000;
    const all = Array.from({ length: n }, (_, i) => {
      const ms = base + Math.floor((i * 3 * DAY) / n);
      return anActivity('org-bench', {
        id: gen(ms),
        created_at: new Date(ms).toISOString(),
        alarm: i % 10 === 0,
        blocked: i % 20 === 0,
        policy_id: 'pol-1',
        policy_ids: ['pol-1'],
        pre_analysis: analysis(),
        input_excerpt: 'Please summarise the attached quarterly report for me. '.repeat(5),
        output_excerpt: 'Here is a summary of the quarterly report. '.repeat(5),
        metadata: { session: 's-1', user_agent: 'bench' },
      });
    });
    const bytes = all.reduce((sum, a) => sum + JSON.stringify(a).length, 0);

    let t = performance.now();
    // As the ingester would: batches of 500, one after another.
    for (let i = 0; i < n; i += 500) await store.record(all.slice(i, i + 500));
    const writeMs = performance.now() - t;

    t = performance.now();
    const exported = await exportAll(store, 'org-bench', { limit: 1000 });
    const readMs = performance.now() - t;

    expect(exported.ids).toEqual(all.map((a) => a.id));
    expect(exported.pages).toBe(10);
    console.log(
      `[cassandra activity] ${n} records (${Math.round(bytes / n)} B JSON each), 1 org, 3 days: ` +
        `record ${Math.round(n / (writeMs / 1000))}/s (${Math.round(writeMs)} ms, batches of 500); ` +
        `export ${Math.round(n / (readMs / 1000))}/s (${Math.round(readMs)} ms, ${exported.pages} pages of 1000)`,
    );
  });
});

describe('migrateCassandra (real node)', () => {
  it('applies the migrations once, also from two clients at once, and leaves one schema', async () => {
    const ks = `int_migrate_${run}`;
    created.push(ks);
    const other = newClient();
    try {
      const results = await Promise.all([
        migrateCassandra(client, { keyspace: ks }),
        migrateCassandra(other, { keyspace: ks }),
      ]);
      expect(results.map((r) => r.applied).sort()).toEqual([[], MIGRATIONS]);
      const again = await migrateCassandra(other, { keyspace: ks });
      expect(again).toEqual({ keyspace: ks, applied: [], alreadyApplied: MIGRATIONS });
    } finally {
      await other.shutdown();
    }
    const tables = await client.execute(
      'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?',
      [ks],
      { prepare: true },
    );
    expect(tables.rows.map((r) => r.get('table_name') as string).sort()).toEqual([
      'activity_by_org_day',
      'activity_days_by_org',
      'alarms_by_org_day',
      'api_keys',
      'api_keys_by_id',
      'api_keys_by_org',
      'jobs',
      'org_directory',
      'orgs',
      'policies',
      'policies_by_org',
      'schema_migrations',
      'schema_migrations_lock',
      'unfinished_jobs',
    ]);
    const history = await client.execute(
      `SELECT version, name FROM ${ks}.schema_migrations WHERE scope = 'guard'`,
    );
    expect(history.rows.map((r) => [r.get('version'), r.get('name')])).toEqual([
      [1, '001_activity.cql'],
      [2, '002_config.cql'],
      [3, '003_jobs.cql'],
    ]);
    const lock = await client.execute(
      `SELECT owner FROM ${ks}.schema_migrations_lock WHERE name = 'migrate'`,
    );
    expect(lock.rows).toEqual([]);

    const store = new CassandraActivityStore(client, { keyspace: ks, ttlSeconds: 0 });
    const a = anActivity('org-a', { alarm: true });
    await store.record([a]);
    expect((await store.list('org-a', { alarmOnly: true, limit: 5 })).items).toEqual([a]);
  });

  it('applies only the files not applied yet, in order, and refuses an edited applied file', async () => {
    const ks = `int_migrate_more_${run}`;
    created.push(ks);
    const dir = mkdtempSync(path.join(tmpdir(), 'guard-cql-'));
    try {
      cpSync(CASSANDRA_MIGRATIONS_DIR, dir, { recursive: true });
      expect(await migrateCassandra(client, { keyspace: ks, migrationsDir: dir })).toMatchObject({
        applied: MIGRATIONS,
      });
      writeFileSync(
        path.join(dir, '010_later.cql'),
        `CREATE TABLE IF NOT EXISTS {{keyspace}}.later_b (k text PRIMARY KEY, v text);
         INSERT INTO {{keyspace}}.later_a (k, v) VALUES ('x', 'from 010');`,
      );
      writeFileSync(
        path.join(dir, '005_extra.cql'),
        `-- a comment; with a semicolon
         CREATE TABLE IF NOT EXISTS {{keyspace}}.later_a (k text PRIMARY KEY, v text)
           WITH comment = 'it''s; one statement';
         /* two; statements */ INSERT INTO {{keyspace}}.later_a (k, v) VALUES ('y', 'from 005')`,
      );
      expect(await migrateCassandra(client, { keyspace: ks, migrationsDir: dir })).toEqual({
        keyspace: ks,
        applied: ['005_extra.cql', '010_later.cql'],
        alreadyApplied: MIGRATIONS,
      });
      const rows = await client.execute(`SELECT k, v FROM ${ks}.later_a WHERE k IN ('x', 'y')`);
      expect(rows.rows.map((r) => r.get('v') as string).sort()).toEqual(['from 005', 'from 010']);
      const comment = await client.execute(
        "SELECT comment FROM system_schema.tables WHERE keyspace_name = ? AND table_name = 'later_a'",
        [ks],
        { prepare: true },
      );
      expect(comment.first().get('comment')).toBe("it's; one statement");

      // Comments and indentation may change; statements may not.
      const file = path.join(dir, '001_activity.cql');
      const original = readFileSync(file, 'utf8');
      writeFileSync(file, `-- edited comment\n${original.replaceAll('\n  ', '\n    ')}`);
      expect(
        (await migrateCassandra(client, { keyspace: ks, migrationsDir: dir })).applied,
      ).toEqual([]);
      writeFileSync(file, original.replace('created_ms bigint,', 'created_ms bigint, extra text,'));
      await expect(migrateCassandra(client, { keyspace: ks, migrationsDir: dir })).rejects.toThrow(
        /001_activity\.cql was applied with checksum/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function analysis(): Record<string, unknown> {
  return {
    violation: 0.12,
    observe_violation: null,
    violated_rules: [],
    violated_rule_descriptions: [],
    ipi: false,
    mutation: false,
    scanner_output: { pii: { found: false } },
    reasoning: '',
    input_tokens: 120,
    output_tokens: 0,
    error: false,
    error_message: null,
  };
}
