import { describe, expect, it } from 'vitest';
import { newId } from '@guard/platform';
import { queuedJob, type JobRecord, type JobStore } from '@guard/domain';

/** A queued export job of an org, as a runner would store it. */
export function anExportJob(orgId = newId(), over: Partial<JobRecord> = {}): JobRecord {
  const job = queuedJob({
    id: newId(),
    org_id: orgId,
    created_at: new Date().toISOString(),
    kind: 'activity_export',
    input: {
      filters: { since: null, until: null, alarmOnly: false },
      range: { after: null, before: 'ffffffffffffffffffffffff' },
      pageSize: 100,
    },
  });
  return { ...job, ...over } as JobRecord;
}

/** Behaviour every JobStore adapter must show; `make` gives a fresh, empty store. */
export function jobStoreContract(name: string, make: () => Promise<JobStore> | JobStore): void {
  describe(`JobStore contract: ${name}`, () => {
    it('creates a job once: a second create of the id answers the stored job, unchanged', async () => {
      const store = await make();
      const job = anExportJob();
      expect(await store.create(job)).toEqual({ job, created: true });
      const again = { ...job, org_id: 'someone-else' };
      expect(await store.create(again)).toEqual({ job, created: false });
      expect(await store.get(job.id)).toEqual(job);
      expect(await store.get('no-such-job')).toBeNull();
    });

    it('applies patches field by field and keeps what they do not name', async () => {
      const store = await make();
      const job = anExportJob();
      await store.create(job);
      await store.update(job.id, { status: 'running', started_at: '2026-01-01T00:00:00.000Z' });
      const after = await store.update(job.id, {
        progress: { rows: 5, pages: 1 },
        checkpoint: { cursor: 'abc', rows: 5, pages: 1 },
      });
      expect(after).toMatchObject({
        status: 'running',
        started_at: '2026-01-01T00:00:00.000Z',
        progress: { rows: 5, pages: 1 },
        checkpoint: { cursor: 'abc', rows: 5, pages: 1 },
        input: job.input,
      });
      expect(await store.get(job.id)).toEqual(after);
      expect(await store.update('no-such-job', { status: 'failed' })).toBeNull();
    });

    it('leases a job to one owner at a time until the lease lapses, counting hand-overs', async () => {
      const store = await make();
      const job = anExportJob();
      await store.create(job);
      const a = await store.claim(job.id, 'a', 1000, 100);
      expect(a).toMatchObject({ lease_owner: 'a', lease_until: 1100, attempts: 1 });
      expect(await store.claim(job.id, 'b', 1050, 100)).toBeNull();
      // The holder renews without it counting as an attempt.
      expect(await store.claim(job.id, 'a', 1090, 100)).toMatchObject({
        lease_until: 1190,
        attempts: 1,
      });
      expect(await store.claim(job.id, 'b', 1150, 100)).toBeNull();
      // Lapsed: another owner takes it up.
      expect(await store.claim(job.id, 'b', 1191, 100)).toMatchObject({
        lease_owner: 'b',
        attempts: 2,
      });
      // Forced (the only process left on the store at its start).
      expect(await store.claim(job.id, 'c', 1200, 100, true)).toMatchObject({
        lease_owner: 'c',
        attempts: 3,
      });
    });

    it('never leases a finished or unknown job', async () => {
      const store = await make();
      const job = anExportJob();
      await store.create(job);
      await store.update(job.id, { status: 'succeeded' });
      expect(await store.claim(job.id, 'a', 0, 100, true)).toBeNull();
      expect(await store.claim('no-such-job', 'a', 0, 100)).toBeNull();
    });

    it('lists queued and running jobs oldest first, not finished ones', async () => {
      const store = await make();
      const times = ['2026-01-01T00:00:03.000Z', '2026-01-01T00:00:01.000Z'];
      const [late, early] = times.map((t) => anExportJob(undefined, { created_at: t }));
      const done = anExportJob(undefined, { created_at: '2026-01-01T00:00:00.000Z' });
      const failed = anExportJob(undefined, { created_at: '2026-01-01T00:00:02.000Z' });
      for (const j of [late!, early!, done, failed]) await store.create(j);
      await store.update(late!.id, { status: 'running' });
      await store.update(done.id, { status: 'succeeded' });
      await store.update(failed.id, { status: 'failed' });
      expect((await store.listUnfinished()).map((j) => j.id)).toEqual([early!.id, late!.id]);
    });
  });
}
