import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createIdGenerator, newId } from '@guard/platform';
import {
  BULK_IMPORT_CHUNK,
  bulkImportIds,
  queuedJob,
  type ActivityStore,
  type BulkItem,
  type NewJob,
} from '@guard/domain';
import { decorate } from '@guard/domain/caching/decorate';
import { aRecordedActivity } from '@guard/testing/recorded-activity';
import { openSqlite } from '../sqlite/sqlite-database.js';
import { SqliteActivityStore } from '../sqlite/sqlite-activity-store.js';
import { SqliteJobStore } from '../sqlite/sqlite-job-store.js';
import { SqlitePolicyStore } from '../sqlite/sqlite-policy-store.js';
import { bundleJobWorkflows } from './job-workflow-bundle.js';
import { createTemporalJobActivities } from './jobs.activities.js';
import { TemporalJobRunner } from './temporal-job-runner.js';

/**
 * Jobs through Temporal: TemporalJobRunner starts the workflows of jobs.workflow.ts, a worker in
 * this process runs them with the job activities over SQLite stores, and the runner answers from
 * the job store, as the in-process runner does.
 */

// A task queue of its own: no other worker (another file, another run) can take these tasks.
const taskQueue = `int-jobs-${process.pid}-${Date.now().toString(36)}`;
const orgId = newId();
// Activity reads for this org fail: a step that keeps failing.
const brokenOrg = newId();

const db = openSqlite(':memory:');
const jobs = new SqliteJobStore(db);
const policies = new SqlitePolicyStore(db);
const sqliteActivities = new SqliteActivityStore(db);
let brokenReads = 0;
const activities = decorate<ActivityStore>(sqliteActivities, {
  list: (org, query) => {
    if (org !== brokenOrg) return sqliteActivities.list(org, query);
    brokenReads++;
    return Promise.reject(new Error('activity store unreachable'));
  },
});

function exportJob(org = orgId): Extract<NewJob, { kind: 'activity_export' }> {
  return {
    id: `activity-export:${org}:${newId()}`,
    org_id: org,
    created_at: new Date().toISOString(),
    kind: 'activity_export',
    input: {
      filters: { since: null, until: null, alarmOnly: false },
      range: { after: null, before: 'ffffffffffffffffffffffff' },
      pageSize: 10,
    },
  };
}

function items(n: number): BulkItem[] {
  return Array.from({ length: n }, (_, i) => ({
    ok: true as const,
    input: { name: `imported ${i}`, rules: { no_violence: `no violence, item ${i}` } },
  }));
}

describe('TemporalJobRunner (real dev server, worker in this process)', () => {
  let nativeConnection: NativeConnection;
  let connection: Connection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;
  let runner: TemporalJobRunner;

  beforeAll(async () => {
    try {
      // A failing job is expected below: WARN would print its stack on every green run.
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      // installed already by another file in this process
    }
    const address = inject('engines').temporalAddress;
    nativeConnection = await NativeConnection.connect({ address });
    worker = await Worker.create({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundle: await bundleJobWorkflows({ logger: new DefaultLogger('WARN') }),
      activities: createTemporalJobActivities({
        jobs,
        policies,
        activities,
        now: () => new Date(),
        pagesPerCall: 2,
      }),
    });
    running = worker.run();
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace: 'default' });
    runner = new TemporalJobRunner({
      client,
      store: jobs,
      taskQueue,
      workflowOptions: { retryInitialIntervalMs: 50, retryMaximumAttempts: 3 },
    });

    const idAt = createIdGenerator();
    const t0 = Date.now() - 3600_000;
    await sqliteActivities.record(
      Array.from({ length: 35 }, (_, i) =>
        aRecordedActivity(orgId, i, {
          id: idAt(t0 + i),
          created_at: new Date(t0 + i).toISOString(),
        }),
      ),
    );
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
    await nativeConnection?.close();
    db.close();
  });

  it('runs an export job: queued at once, then counted page by page to succeeded', async () => {
    const job = exportJob();
    const started = await runner.start(job);
    expect(started).toMatchObject({ id: job.id, status: 'queued', progress: { rows: 0 } });
    expect((await runner.get(job.id))?.kind).toBe('activity_export');

    const done = await runner.waitFor(job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      progress: { rows: 35, pages: 4 },
      checkpoint: { rows: 35, pages: 4 },
      error: null,
    });
    expect(done.started_at).not.toBeNull();
    expect(done.finished_at).not.toBeNull();
    const description = await client.workflow.getHandle(job.id).describe();
    expect(description.type).toBe('activityExportJobWorkflow');
    expect(description.taskQueue).toBe(taskQueue);
    expect(description.status.name).toBe('COMPLETED');
  });

  it('starts a job once: a second start, running or finished, answers the job and runs nothing', async () => {
    const job = exportJob();
    const [first, second] = await Promise.all([
      runner.start(job),
      runner.start({ ...job, input: { ...job.input, pageSize: 1 } }),
    ]);
    expect(second.input).toEqual(job.input);
    expect(first.input).toEqual(job.input);
    const { runId } = await client.workflow.getHandle(job.id).describe();
    await runner.waitFor(job.id);

    const again = await runner.start({ ...job, input: { ...job.input, pageSize: 1 } });
    expect(again).toMatchObject({ status: 'succeeded', input: job.input });
    const after = await client.workflow.getHandle(job.id).describe();
    expect(after.runId).toBe(runId);
    expect(after.status.name).toBe('COMPLETED');
    // pageSize 10 throughout: the second start's input never ran.
    expect((await runner.waitFor(job.id)).progress).toEqual({ rows: 35, pages: 4 });
  });

  it('imports 100 policies exactly once, in chunks, with ids derived from the job', async () => {
    const job: NewJob = {
      id: `bulk-import:${orgId}:${newId()}`,
      org_id: orgId,
      created_at: new Date().toISOString(),
      kind: 'policy_bulk_import',
      input: { userId: 'u1', items: items(100) },
    };
    await runner.start(job);
    const done = await runner.waitFor(job.id);
    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({ total: 100, successful: 100, failed: 0 });
    expect(done.progress).toEqual({ rows: 100, pages: 100 / BULK_IMPORT_CHUNK });
    const expected = Array.from(
      { length: 100 },
      (_, i) => bulkImportIds(job.id, job.created_at, i).policy,
    );
    expect(done.result?.results.map((r) => r.id)).toEqual(expected);
    expect(await policies.count(orgId)).toBe(100);
    for (const id of expected) expect(await policies.listVersions(orgId, id)).toHaveLength(1);
    expect((await client.workflow.getHandle(job.id).describe()).type).toBe('bulkImportJobWorkflow');
  });

  it('a step that keeps failing is retried as configured, then fails the job with its message', async () => {
    const job = exportJob(brokenOrg);
    await runner.start(job);
    const done = await runner.waitFor(job.id);
    expect(done).toMatchObject({ status: 'failed', error: 'activity store unreachable' });
    expect(done.finished_at).not.toBeNull();
    // retryMaximumAttempts: 3, enforced by the server.
    expect(brokenReads).toBe(3);
    // The workflow recorded the failure itself and completed.
    expect((await client.workflow.getHandle(job.id).describe()).status.name).toBe('COMPLETED');
  });

  it('a job recorded but never started (its starter died in between) is started by waitFor', async () => {
    const job = exportJob();
    await jobs.create(queuedJob(job));
    expect((await runner.waitFor(job.id)).status).toBe('succeeded');
  });

  it('waitFor of an unknown job says so', async () => {
    await expect(runner.waitFor('activity-export:nobody:nothing')).rejects.toThrow(
      /not in the job store/,
    );
  });
});
