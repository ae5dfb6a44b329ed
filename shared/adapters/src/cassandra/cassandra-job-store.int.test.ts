import { Client } from 'cassandra-driver';
import { diesBefore, heldBefore, interposed } from '@guard/testing/cassandra-faults';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { JobRecord } from '@guard/domain';
import { anExportJob, jobStoreContract } from '@guard/testing';
import { CassandraJobStore } from './cassandra-job-store.js';
import { migrateCassandra } from './migrate.js';

// One keyspace for the file and run, made once (DDL is slow) and dropped afterwards.
const keyspace = `int_jobs_${process.pid}_${Date.now().toString(36)}`;
const TABLES = ['jobs', 'unfinished_jobs'];

let client: Client;

beforeAll(async () => {
  const { cassandraContactPoints, cassandraLocalDc } = inject('engines');
  client = new Client({ contactPoints: cassandraContactPoints, localDataCenter: cassandraLocalDc });
  await client.connect();
  await migrateCassandra(client, { keyspace });
});

afterAll(async () => {
  await client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
  await client?.shutdown();
});

// The contract lists every unfinished job in the store, so each case starts from empty tables.
jobStoreContract('cassandra', async () => {
  for (const table of TABLES) await client.execute(`TRUNCATE ${keyspace}.${table}`);
  return new CassandraJobStore(client, { keyspace });
});

/**
 * Holds the first `n` queries matching `pattern` until all `n` have arrived, so that writers
 * that read the same state reach their compare-and-sets together; later ones pass at once.
 */
function meetingAt(pattern: RegExp, n: number): Client {
  let arrived = 0;
  let all!: () => void;
  const met = new Promise<void>((r) => (all = r));
  return interposed(client, async (cql) => {
    if (!pattern.test(cql)) return;
    if (++arrived === n) all();
    await met;
  });
}

const CLAIM = /UPDATE \w+\.jobs SET attempts/;
const WRITE = /UPDATE \w+\.jobs SET/;
const INSERT_JOB = /INSERT INTO \w+\.jobs /;
const REMOVE_ROW = /DELETE FROM \w+\.unfinished_jobs/;

/** The rows of the unfinished-jobs index for these jobs, as `created_at id`. */
async function indexRows(...jobs: JobRecord[]): Promise<string[]> {
  const rs = await client.execute(
    `SELECT created_at, id FROM ${keyspace}.unfinished_jobs WHERE scope = 'all'`,
  );
  return rs.rows
    .filter((r) => jobs.some((j) => j.id === r.get('id')))
    .map((r) => `${r.get('created_at') as string} ${r.get('id') as string}`);
}

const row = (j: JobRecord) => `${j.created_at} ${j.id}`;

async function unfinishedIds(store: CassandraJobStore, ...jobs: JobRecord[]): Promise<string[]> {
  return (await store.listUnfinished())
    .map((j) => j.id)
    .filter((id) => jobs.some((j) => j.id === id));
}

describe('CassandraJobStore (real node)', () => {
  const store = () => new CassandraJobStore(client, { keyspace });

  it('gives a lapsed lease to exactly one of eight claimers that read it at once', async () => {
    const job = anExportJob();
    await store().create(job);
    expect(await store().claim(job.id, 'dead-pod', 1000, 100)).toMatchObject({ attempts: 1 });
    const racing = new CassandraJobStore(meetingAt(CLAIM, 8), { keyspace });
    const owners = Array.from({ length: 8 }, (_, i) => `pod-${i}`);
    const results = await Promise.all(owners.map((o) => racing.claim(job.id, o, 5000, 100)));
    const won = results.filter((r) => r !== null);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ attempts: 2, lease_until: 5100 });
    expect(owners).toContain(won[0]!.lease_owner);
    expect(await store().get(job.id)).toEqual(won[0]);
  });

  it('lands a progress update and a lease renewal made at the same moment, both', async () => {
    const job = anExportJob();
    await store().create(job);
    await store().claim(job.id, 'pod-a', 1000, 100);
    const both = new CassandraJobStore(meetingAt(WRITE, 2), { keyspace });
    const [updated, renewed] = await Promise.all([
      both.update(job.id, { status: 'running', progress: { rows: 7, pages: 1 } }),
      both.claim(job.id, 'pod-a', 1050, 100),
    ]);
    expect(renewed).toMatchObject({ lease_owner: 'pod-a', lease_until: 1150, attempts: 1 });
    expect(updated).toMatchObject({ status: 'running', progress: { rows: 7, pages: 1 } });
    expect(await store().get(job.id)).toMatchObject({
      status: 'running',
      progress: { rows: 7, pages: 1 },
      lease_owner: 'pod-a',
      lease_until: 1150,
      attempts: 1,
    });
  });

  it('keeps the index to unfinished jobs, and a refused create leaves no row of its own', async () => {
    const job = anExportJob();
    await store().create(job);
    expect(await indexRows(job)).toEqual([row(job)]);
    const later = { ...job, created_at: new Date(Date.parse(job.created_at) + 5000).toISOString() };
    expect(await store().create(later)).toEqual({ job, created: false });
    expect(await indexRows(job)).toEqual([row(job)]);

    await store().update(job.id, { status: 'failed', error: 'boom' });
    expect(await indexRows(job)).toEqual([]);
    expect(await unfinishedIds(store(), job)).toEqual([]);
    // Made unfinished again, it is listed again.
    await store().update(job.id, { status: 'running' });
    expect(await indexRows(job)).toEqual([row(job)]);
    expect(await unfinishedIds(store(), job)).toEqual([job.id]);
  });

  it('does not list a job finished by a process that died before taking out its row', async () => {
    const job = anExportJob();
    await store().create(job);
    const dying = new CassandraJobStore(diesBefore(client, REMOVE_ROW), { keyspace });
    await expect(dying.update(job.id, { status: 'succeeded' })).rejects.toThrow(/died before/);
    expect(await store().get(job.id)).toMatchObject({ status: 'succeeded' });
    expect(await indexRows(job)).toEqual([row(job)]);
    expect(await unfinishedIds(store(), job)).toEqual([]);
    // The reader took the stale row out.
    expect(await indexRows(job)).toEqual([]);
  });

  it('skips, and keeps, the row of a create that has not written its job yet', async () => {
    const job = anExportJob();
    const dying = new CassandraJobStore(diesBefore(client, INSERT_JOB), { keyspace });
    await expect(dying.create(job)).rejects.toThrow(/died before/);
    expect(await indexRows(job)).toEqual([row(job)]);
    expect(await unfinishedIds(store(), job)).toEqual([]);
    expect(await indexRows(job)).toEqual([row(job)]);
    expect(await store().create(job)).toEqual({ job, created: true });
    expect(await unfinishedIds(store(), job)).toEqual([job.id]);
  });

  it('never takes out the row of a job made unfinished again while a reader removes it', async () => {
    const job = anExportJob();
    await store().create(job);
    const dying = new CassandraJobStore(diesBefore(client, REMOVE_ROW), { keyspace });
    await expect(dying.update(job.id, { status: 'failed' })).rejects.toThrow(/died before/);
    // A reader finds the stale row and stops right before removing it.
    const held = heldBefore(client, REMOVE_ROW);
    const slow = new CassandraJobStore(held.client, { keyspace });
    const reading = slow.listUnfinished();
    await held.reached;
    // Meanwhile the job is made unfinished again: its row is written anew.
    await store().update(job.id, { status: 'queued', error: null });
    held.release();
    expect((await reading).map((j) => j.id)).not.toContain(job.id);
    // The reader's removal was for the state it saw, not for the newer row.
    expect(await indexRows(job)).toEqual([row(job)]);
    expect(await unfinishedIds(store(), job)).toEqual([job.id]);
  });
});
