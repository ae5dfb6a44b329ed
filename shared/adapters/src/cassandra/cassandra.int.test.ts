import { Client, types } from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// Own keyspace per file and run; dropped afterwards so a long-lived node does not accumulate
// schema that slows its next start.
const keyspace = `int_cassandra_${process.pid}_${Date.now().toString(36)}`;

describe('Cassandra (real node)', () => {
  let client: Client;

  beforeAll(async () => {
    const { cassandraContactPoints, cassandraLocalDc } = inject('engines');
    client = new Client({
      contactPoints: cassandraContactPoints,
      localDataCenter: cassandraLocalDc,
    });
    await client.connect();
    await client.execute(
      `CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
    );
    await client.execute(
      `CREATE TABLE ${keyspace}.activity_by_org_day (org_id text, day date, id timeuuid, verdict text, score double,
         PRIMARY KEY ((org_id, day), id)) WITH CLUSTERING ORDER BY (id ASC)`,
    );
  });

  afterAll(async () => {
    await client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await client?.shutdown();
  });

  it('writes rows and reads them back in clustering order within one partition', async () => {
    const insert = `INSERT INTO ${keyspace}.activity_by_org_day (org_id, day, id, verdict, score) VALUES (?, ?, ?, ?, ?)`;
    const day = types.LocalDate.fromString('2026-01-15');
    const base = new Date('2026-01-15T10:00:00Z').getTime();
    const ids = [0, 1, 2].map((i) => types.TimeUuid.fromDate(new Date(base + i * 1000)));
    // Written out of order; the clustering key orders them on read.
    for (const i of [2, 0, 1]) {
      await client.execute(insert, ['org-a', day, ids[i], i === 1 ? 'block' : 'allow', i / 10], {
        prepare: true,
      });
    }
    await client.execute(insert, ['org-b', day, ids[0], 'allow', 0.5], { prepare: true });

    const result = await client.execute(
      `SELECT id, verdict, score FROM ${keyspace}.activity_by_org_day WHERE org_id = ? AND day = ?`,
      ['org-a', day],
      { prepare: true },
    );
    expect(result.rows.map((r) => r.get('id').toString())).toEqual(ids.map((id) => id.toString()));
    expect(result.rows.map((r) => r.get('verdict'))).toEqual(['allow', 'block', 'allow']);
    expect(result.rows.map((r) => r.get('score'))).toEqual([0, 0.1, 0.2]);

    // Cursor-style paging: rows after the last seen id.
    const after = await client.execute(
      `SELECT id FROM ${keyspace}.activity_by_org_day WHERE org_id = ? AND day = ? AND id > ?`,
      ['org-a', day, ids[0]],
      { prepare: true },
    );
    expect(after.rows.map((r) => r.get('id').toString())).toEqual(
      [ids[1], ids[2]].map((id) => id?.toString()),
    );
  });
});
