import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '@guard/platform';
import { bulkImportIds, type BulkItem, type NewJob } from '@guard/domain';
import { openSqlite, type SqliteDb } from '@guard/adapters/sqlite/sqlite-database';
import { SqliteJobStore } from '@guard/adapters/sqlite/sqlite-job-store';
import { SqlitePolicyStore } from '@guard/adapters/sqlite/sqlite-policy-store';
import { TemporalJobRunner } from '@guard/adapters/temporal/temporal-job-runner';
import { freePort } from '@guard/testing/redis-server';
import { exitOf, spawnRole, waitUntilReady, type RoleProcess } from '@guard/testing/role-process';

/**
 * The jobs-worker role as processes of their own (the worker of main.ts over a SQLite file this
 * test reads too): one is SIGKILLed in the middle of a bulk import, another takes over, and the
 * import ends with every policy imported exactly once.
 */

const taskQueue = `int-jobs-worker-${process.pid}-${Date.now().toString(36)}`;
const entry = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'testing/sqlite-jobs-worker.ts',
);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Each policy insert of the workers waits this long: the import takes about 4 s, long enough to
// kill its worker in the middle.
const INSERT_DELAY_MS = 40;

type WorkerProcess = RoleProcess & { port: number };

async function startWorker(file: string): Promise<WorkerProcess> {
  const port = await freePort();
  const role = spawnRole(
    'jobs worker',
    entry,
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      TEMPORAL_ADDRESS: inject('engines').temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      GUARD_JOBS_TASK_QUEUE: taskQueue,
      GUARD_JOBS_SHUTDOWN_GRACE_MS: '2000',
    },
    [file, String(INSERT_DELAY_MS)],
  );
  return { ...role, port };
}

const waitReady = (w: WorkerProcess) => waitUntilReady(w, `http://127.0.0.1:${w.port}/readyz`);

function items(n: number): BulkItem[] {
  return Array.from({ length: n }, (_, i) => ({
    ok: true as const,
    input: { name: `imported ${i}`, rules: { no_violence: `no violence, item ${i}` } },
  }));
}

describe('jobs-worker role (processes on the Temporal dev server)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'guard-jobs-worker-'));
  const file = path.join(dir, 'guard.db');
  const workers: WorkerProcess[] = [];
  let db: SqliteDb;
  let connection: Connection;
  let client: Client;
  let runner: TemporalJobRunner;

  beforeAll(async () => {
    // Migrated here, before any worker opens it.
    db = openSqlite(file);
    connection = await Connection.connect({ address: inject('engines').temporalAddress });
    client = new Client({ connection, namespace: 'default' });
    runner = new TemporalJobRunner({
      client,
      store: new SqliteJobStore(db),
      taskQueue,
      // A dead worker's attempt is given up after 2 s of silence, retried 200 ms later.
      workflowOptions: { heartbeatTimeoutMs: 2_000, retryInitialIntervalMs: 200 },
    });
  });

  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null && !w.child.signalCode) w.child.kill();
    await Promise.all(workers.map((w) => exitOf(w.child)));
    await connection?.close();
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a 100-policy import whose worker is SIGKILLed mid-way completes on another, each policy imported once', async () => {
    const policies = new SqlitePolicyStore(db);
    const orgId = newId();
    const first = await startWorker(file);
    workers.push(first);
    await waitReady(first);
    expect((await fetch(`http://127.0.0.1:${first.port}/healthz`)).status).toBe(200);

    const job: NewJob = {
      id: `bulk-import:${orgId}:${newId()}`,
      org_id: orgId,
      created_at: new Date().toISOString(),
      kind: 'policy_bulk_import',
      input: { userId: 'u1', items: items(100) },
    };
    await runner.start(job);

    // Killed once it has imported a chunk and a half: with a chunk in flight.
    const deadline = Date.now() + 30_000;
    while ((await policies.count(orgId)) < 15) {
      if (Date.now() > deadline) throw new Error(`no import progress:\n${first.output.join('\n')}`);
      await sleep(20);
    }
    first.child.kill('SIGKILL');
    expect((await exitOf(first.child)).signal).toBe('SIGKILL');
    const atKill = await policies.count(orgId);
    expect(atKill).toBeGreaterThan(0);
    expect(atKill).toBeLessThan(100);
    const stalled = await runner.get(job.id);
    expect(stalled?.status).toBe('running');
    expect(stalled?.progress.rows).toBeLessThan(100);

    const second = await startWorker(file);
    workers.push(second);
    await waitReady(second);
    const done = await runner.waitFor(job.id);

    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({ total: 100, successful: 100, failed: 0 });
    const ids = Array.from({ length: 100 }, (_, i) => bulkImportIds(job.id, job.created_at, i));
    expect(done.result?.results.map((r) => r.id)).toEqual(ids.map((i) => i.policy));
    expect(await policies.count(orgId)).toBe(100);
    const listed = await policies.list(orgId, { limit: 1000 });
    expect(new Set(listed.items.map((p) => p.name)).size).toBe(100);
    for (const { policy, version } of ids) {
      const versions = await policies.listVersions(orgId, policy);
      expect(versions.map((v) => v.id)).toEqual([version]);
    }
    // The chunk the first worker held when it died was given up and run again by the second.
    const history = await client.workflow.getHandle(job.id).fetchHistory();
    const retried = (history.events ?? [])
      .map((e) => e.activityTaskStartedEventAttributes)
      .filter((a) => a && (a.attempt ?? 1) > 1);
    expect(retried.map((a) => a?.identity?.split('@')[0])).toContain(String(second.child.pid));

    // A stop is graceful: the worker drains and the process exits 0.
    second.child.kill('SIGTERM');
    expect(await exitOf(second.child)).toEqual({ code: 0, signal: null });
    expect(second.logs.some((l) => l.msg === 'shutting down')).toBe(true);
  }, 85_000);
});
