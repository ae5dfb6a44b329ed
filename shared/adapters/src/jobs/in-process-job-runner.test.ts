import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createIdGenerator, createLogger, newId } from '@guard/platform';
import {
  BULK_IMPORT_CHUNK,
  bulkImportIds,
  createJobActivities,
  queuedJob,
  type BulkItem,
  type JobActivities,
  type JobRecord,
  type NewJob,
} from '@guard/domain';
import { aRecordedActivity } from '@guard/testing/recorded-activity';
import { MemoryActivityStore } from '../memory/memory-activity-store.js';
import { MemoryPolicyStore } from '../memory/memory-policy-store.js';
import { openSqlite } from '../sqlite/sqlite-database.js';
import { SqliteJobStore } from '../sqlite/sqlite-job-store.js';
import { SqlitePolicyStore } from '../sqlite/sqlite-policy-store.js';
import { SqliteActivityStore } from '../sqlite/sqlite-activity-store.js';
import { InProcessJobRunner } from './in-process-job-runner.js';

/**
 * The embedded runner over the SQLite job table: jobs run once, and what a dead process left
 * unfinished is resumed (at start, or when its lease lapses) and finishes with the right result.
 */

const runners: InProcessJobRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
});

function logSink(lines: string[]) {
  return createLogger(
    { level: 'info', logContent: false },
    new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    }),
  );
}

function setup(
  options: { leaseMs?: number; activities?: (a: JobActivities) => JobActivities } = {},
) {
  const db = openSqlite(':memory:');
  const jobs = new SqliteJobStore(db);
  const activities = new SqliteActivityStore(db);
  const policies = new SqlitePolicyStore(db);
  const acts = createJobActivities({
    jobs,
    activities,
    policies,
    now: () => new Date(),
    pagesPerCall: 2,
  });
  const logs: string[] = [];
  const runner = () => {
    const r = new InProcessJobRunner({
      store: jobs,
      activities: options.activities ? options.activities(acts) : acts,
      logger: logSink(logs),
      leaseMs: options.leaseMs ?? 60_000,
      sweepMs: 20,
    });
    runners.push(r);
    return r;
  };
  return { db, jobs, activities, policies, acts, logs, runner };
}

const orgId = newId();

function exportJob(pageSize = 10): Extract<NewJob, { kind: 'activity_export' }> {
  return {
    id: newId(),
    org_id: orgId,
    created_at: new Date().toISOString(),
    kind: 'activity_export',
    input: {
      filters: { since: null, until: null, alarmOnly: false },
      range: { after: null, before: 'ffffffffffffffffffffffff' },
      pageSize,
    },
  };
}

function items(n: number): BulkItem[] {
  return Array.from({ length: n }, (_, i) => ({
    ok: true as const,
    input: { name: `imported ${i}`, rules: { no_violence: `no violence, item ${i}` } },
  }));
}

function bulkJob(n: number): Extract<NewJob, { kind: 'policy_bulk_import' }> {
  return {
    id: `bulk-import:${orgId}:${newId()}`,
    org_id: orgId,
    created_at: new Date().toISOString(),
    kind: 'policy_bulk_import',
    input: { userId: 'u1', items: items(n) },
  };
}

async function seedActivities(store: SqliteActivityStore, n: number): Promise<string[]> {
  const idAt = createIdGenerator();
  const t0 = Date.now() - 3600_000;
  const rows = Array.from({ length: n }, (_, i) =>
    aRecordedActivity(orgId, i, { id: idAt(t0 + i), created_at: new Date(t0 + i).toISOString() }),
  );
  await store.record(rows);
  return rows.map((a) => a.id);
}

describe('InProcessJobRunner', () => {
  it('runs a job once: a second start of the same id answers the job and runs nothing', async () => {
    const { activities, runner, logs } = setup();
    await seedActivities(activities, 35);
    const r = runner();
    const job = exportJob();
    await r.start(job);
    const again = await r.start({ ...job, input: { ...job.input, pageSize: 1 } });
    expect(again.input).toEqual(job.input);
    const done = await r.waitFor(job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      progress: { rows: 35, pages: 4 },
      attempts: 1,
    });
    expect(logs.filter((l) => l.includes('"job started"'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('"job finished"'))).toHaveLength(1);
  });

  it('resumes at start an export its dead process left running, from its checkpoint', async () => {
    const { jobs, activities, runner, logs } = setup();
    const ids = await seedActivities(activities, 35);
    const job = exportJob();
    // As a process that died after counting two pages left it.
    const left: JobRecord = {
      ...queuedJob(job),
      status: 'running',
      started_at: new Date().toISOString(),
      progress: { rows: 20, pages: 2 },
      checkpoint: { cursor: ids[19]!, rows: 20, pages: 2 },
      attempts: 1,
      lease_owner: 'dead-process',
      lease_until: Date.now() + 60_000,
    };
    await jobs.create(left);
    const r = runner();
    expect(await r.resume({ takeOver: true })).toBe(1);
    const done = await r.waitFor(job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      progress: { rows: 35, pages: 4 },
      attempts: 2,
    });
    expect(done.started_at).toBe(left.started_at);
    expect(logs.some((l) => l.includes('"job resumed"'))).toBe(true);
  });

  it("with other workers on the store, waits for a job's lease to lapse before resuming it", async () => {
    const { jobs, activities, runner } = setup({ leaseMs: 100 });
    await seedActivities(activities, 5);
    const job = exportJob();
    await jobs.create({
      ...queuedJob(job),
      status: 'running',
      attempts: 1,
      lease_owner: 'another-worker',
      lease_until: Date.now() + 300,
    });
    const r = runner();
    expect(await r.resume({ takeOver: false })).toBe(0);
    await new Promise((res) => setTimeout(res, 150));
    expect((await jobs.get(job.id))?.status).toBe('running');
    const done = await r.waitFor(job.id);
    expect(done).toMatchObject({ status: 'succeeded', progress: { rows: 5 } });
    expect(done.lease_owner).toBe(r.owner);
  });

  it('fails clearly a job taken up more often than maxAttempts', async () => {
    const { jobs, runner } = setup();
    const job = exportJob();
    await jobs.create({ ...queuedJob(job), status: 'running', attempts: 3, lease_owner: 'dead' });
    const r = runner();
    await r.resume({ takeOver: true });
    const done = await r.waitFor(job.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/interrupted 3 times/);
  });

  it('a step that keeps failing fails the job with its message', async () => {
    const { runner } = setup({
      activities: (a) => ({
        ...a,
        countExportPages: () => Promise.reject(new Error('activity store unreachable')),
      }),
    });
    const r = runner();
    const job = exportJob();
    await r.start(job);
    const done = await r.waitFor(job.id);
    expect(done).toMatchObject({ status: 'failed', error: 'activity store unreachable' });
    expect(done.finished_at).not.toBeNull();
  });
});

describe('bulk import as a job', () => {
  it('imports every item once, with ids derived from the job, in order', async () => {
    const { policies, runner } = setup();
    const r = runner();
    const job = bulkJob(25);
    await r.start(job);
    const done = await r.waitFor(job.id);
    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({ total: 25, successful: 25, failed: 0 });
    const expected = job.input.items.map((_, i) => bulkImportIds(job.id, job.created_at, i).policy);
    expect(done.result?.results.map((x) => x.id)).toEqual(expected);
    expect([...expected].sort()).toEqual(expected);
    expect(await policies.count(orgId)).toBe(25);
    expect(done.progress).toEqual({ rows: 25, pages: Math.ceil(25 / BULK_IMPORT_CHUNK) });
  });

  it('resumed after a crash mid-import, ends with every policy imported exactly once', async () => {
    const { jobs, policies, acts, runner } = setup();
    const job = bulkJob(100);
    // The dead process imported three chunks and half of the fourth, then died.
    await jobs.create({ ...queuedJob(job), status: 'running', attempts: 1, lease_owner: 'dead' });
    for (let start = 0; start < 30; start += BULK_IMPORT_CHUNK)
      await acts.importPolicyChunk({
        jobId: job.id,
        orgId,
        userId: 'u1',
        createdAt: job.created_at,
        start,
        items: job.input.items.slice(start, start + BULK_IMPORT_CHUNK),
        total: 100,
      });
    await acts.importPolicyChunk({
      jobId: job.id,
      orgId,
      userId: 'u1',
      createdAt: job.created_at,
      start: 30,
      items: job.input.items.slice(30, 35),
      total: 100,
    });
    expect(await policies.count(orgId)).toBe(35);

    const r = runner();
    await r.resume({ takeOver: true });
    const done = await r.waitFor(job.id);
    expect(done.result).toMatchObject({ total: 100, successful: 100, failed: 0 });
    expect(await policies.count(orgId)).toBe(100);
    const listed = await policies.list(orgId, { limit: 1000 });
    expect(new Set(listed.items.map((p) => p.name)).size).toBe(100);
    const ids = done.result!.results.map((x) => x.id);
    expect(new Set(ids).size).toBe(100);
    // Every policy has exactly one version: nothing was written twice.
    for (const id of ids.slice(25, 40))
      expect(await policies.listVersions(orgId, id!)).toHaveLength(1);
  });

  it('an item whose id is taken by different content is reported on its item, not overwritten', async () => {
    const policies = new MemoryPolicyStore();
    const jobStore = new SqliteJobStore(openSqlite(':memory:'));
    const acts = createJobActivities({
      jobs: jobStore,
      activities: new MemoryActivityStore(),
      policies,
      now: () => new Date(),
    });
    const job = bulkJob(2);
    await jobStore.create(queuedJob(job));
    const chunk = {
      jobId: job.id,
      orgId,
      userId: 'u1',
      createdAt: job.created_at,
      start: 0,
      items: job.input.items,
      total: 2,
    };
    const first = await acts.importPolicyChunk(chunk);
    const changed = items(2).map((it, i) =>
      it.ok && i === 1 ? { ok: true as const, input: { ...it.input, name: 'changed' } } : it,
    );
    const second = await acts.importPolicyChunk({ ...chunk, items: changed });
    expect(second[0]).toEqual(first[0]);
    expect(second[1]).toMatchObject({ success: false, id: null });
    expect((await policies.get(orgId, first[1]!.id!))?.name).toBe('imported 1');
  });
});
