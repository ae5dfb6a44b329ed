import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityExportJob, ActivityRecord, ValidationErrorBody } from '@guard/contracts';
import { createIdGenerator } from '@guard/platform';
import { queuedJob, type Activity } from '@guard/domain';
import { aRecordedActivity } from '@guard/testing/recorded-activity';
import { expectShape } from '../testing/expect-shape.js';
import { startInProcessApi, type InProcessApi, type TestOrg } from '../testing/in-process.js';

/**
 * Activity export jobs over HTTP, on the in-process runner: start, follow, download; who may see
 * which job; what a job covers (its filters, frozen when it was created); every bad input.
 */

let api: InProcessApi;
let acme: TestOrg;
let other: TestOrg;
/** Acme's activities, oldest first: 5,000 of them, every 7th an alarm. */
let recorded: Activity[];

/** Two hours ago, one activity a second: all settled, every id made from its own time. */
const T0 = Date.now() - 2 * 3600_000;
const idAt = createIdGenerator();

beforeAll(async () => {
  api = await startInProcessApi();
  acme = await api.makeOrg('acme');
  other = await api.makeOrg('other');
  recorded = [];
  const noise: Activity[] = [];
  for (let i = 0; i < 5000; i++) {
    const ms = T0 + i * 1000;
    const at = new Date(ms).toISOString();
    recorded.push(aRecordedActivity(acme.orgId, i, { id: idAt(ms), created_at: at }));
    if (i % 10 === 0)
      noise.push(aRecordedActivity(other.orgId, i, { id: idAt(ms), created_at: at }));
  }
  // Out of order, in chunks, as batches from several pods would land.
  for (let i = 4000; i >= 0; i -= 1000)
    await api.stores.activities.record([...recorded.slice(i, i + 1000), ...noise.slice(i / 10)]);
});
afterAll(async () => {
  await api?.close();
});

async function finished(key: string, id: string): Promise<ActivityExportJob> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await api.client(key).get(`/activity/export-jobs/${id}`);
    expect(res.status).toBe(200);
    const job = expectShape(ActivityExportJob, res.body);
    if (job.status === 'succeeded' || job.status === 'failed') return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function download(key: string, id: string): Promise<Response> {
  return fetch(`${api.url}/activity/export-jobs/${id}/download`, {
    headers: { authorization: `Bearer ${key}` },
  });
}

async function downloadedIds(key: string, id: string): Promise<string[]> {
  const res = await download(key, id);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  const text = await res.text();
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => expectShape(ActivityRecord, JSON.parse(line)).id);
}

async function exportJob(key: string, body: unknown): Promise<ActivityExportJob> {
  const res = await api.client(key).post('/activity/export-jobs', body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const job = expectShape(ActivityExportJob, res.body);
  expect(res.headers.get('location')).toBe(`/activity/export-jobs/${job.id}`);
  return job;
}

describe('POST /activity/export-jobs', () => {
  it('exports 5,000 activities: progress counts them, the download has exactly their ids in order', async () => {
    const started = await exportJob(acme.adminKey, {});
    expect(started.filters).toEqual({ since: null, until: null, alarm_only: false });
    expect(['queued', 'running', 'succeeded']).toContain(started.status);
    const job = await finished(acme.adminKey, started.id);
    expect(job).toMatchObject({ status: 'succeeded', progress: { rows: 5000, pages: 5 } });
    expect(job.error).toBeNull();
    expect(Date.parse(job.finished_at!)).toBeGreaterThanOrEqual(Date.parse(job.started_at!));
    expect(await downloadedIds(acme.adminKey, job.id)).toEqual(recorded.map((a) => a.id));
  });

  it('applies the filters: alarm_only, and since/until as exclusive bounds', async () => {
    const alarms = await finished(
      acme.adminKey,
      (await exportJob(acme.adminKey, { alarm_only: true })).id,
    );
    const expected = recorded.filter((a) => a.alarm).map((a) => a.id);
    expect(alarms.progress.rows).toBe(expected.length);
    expect(await downloadedIds(acme.adminKey, alarms.id)).toEqual(expected);

    const since = recorded[100]!.created_at;
    const until = recorded[300]!.created_at;
    const window = await finished(
      acme.adminKey,
      (await exportJob(acme.adminKey, { since, until })).id,
    );
    expect(window.filters).toEqual({ since, until, alarm_only: false });
    expect(await downloadedIds(acme.adminKey, window.id)).toEqual(
      recorded.slice(101, 300).map((a) => a.id),
    );
  });

  it('covers what was recorded before it was started, not what lands after', async () => {
    const org = await api.makeOrg('frozen');
    const ms = Date.now() - 5000;
    const before = aRecordedActivity(org.orgId, 1, {
      id: idAt(ms),
      created_at: new Date(ms).toISOString(),
    });
    await api.stores.activities.record([before]);
    const job = await exportJob(org.adminKey, {});
    await api.stores.activities.record([aRecordedActivity(org.orgId)]);
    await new Promise((r) => setTimeout(r, 5));
    await api.stores.activities.record([aRecordedActivity(org.orgId)]);
    expect((await finished(org.adminKey, job.id)).progress).toEqual({ rows: 1, pages: 1 });
    expect(await downloadedIds(org.adminKey, job.id)).toEqual([before.id]);
  });

  it('an org without activity gets an empty, succeeded export', async () => {
    const org = await api.makeOrg('quiet');
    const job = await finished(org.adminKey, (await exportJob(org.adminKey, {})).id);
    expect(job.progress).toEqual({ rows: 0, pages: 0 });
    expect(await downloadedIds(org.adminKey, job.id)).toEqual([]);
  });

  it('is for admins: a member key gets 403 ADMIN_REQUIRED, and starts nothing', async () => {
    const res = await api.client(acme.memberKey).post('/activity/export-jobs', {});
    expect(res.status).toBe(403);
    expect((res.body as { error_code: string }).error_code).toBe('ADMIN_REQUIRED');
  });

  it.each([
    [{ since: 'yesterday' }, 'since'],
    [{ until: 12 }, 'until'],
    [{ alarm_only: 'yes' }, 'alarm_only'],
    [{ limit: 5 }, 'limit'],
    [{ since: '2026-03-02T00:00:00Z', until: '2026-03-01T00:00:00Z' }, 'until'],
    [{ since: '2026-03-01T00:00:00Z', until: '2026-03-01T00:00:00Z' }, 'until'],
  ])('answers 422 in the validation body for %j', async (body, field) => {
    const res = await api.client(acme.adminKey).post('/activity/export-jobs', body);
    expect(res.status).toBe(422);
    const detail = expectShape(ValidationErrorBody, res.body).detail;
    expect(detail.map((d) => d.loc)).toContainEqual(['body', field]);
  });

  it('answers 400 in the validation body for a body that is not JSON', async () => {
    const res = await api
      .client(acme.adminKey)
      .post('/activity/export-jobs', undefined, { raw: '{"since":' });
    expect(res.status).toBe(400);
    expect(expectShape(ValidationErrorBody, res.body).detail[0]?.type).toBe('json_invalid');
  });
});

describe('GET /activity/export-jobs/{id} and its download', () => {
  it("another org's job is not found, and neither is its download", async () => {
    const job = await exportJob(acme.adminKey, { alarm_only: true });
    await finished(acme.adminKey, job.id);
    for (const path of [
      `/activity/export-jobs/${job.id}`,
      `/activity/export-jobs/${job.id}/download`,
    ]) {
      const res = await api.client(other.adminKey).get(path);
      expect(res.status, path).toBe(404);
      expect((res.body as { error_code: string }).error_code).toBe('NOT_FOUND');
    }
    const unknown = await api
      .client(acme.adminKey)
      .get('/activity/export-jobs/ffffffffffffffffffffffff');
    expect(unknown.status).toBe(404);
  });

  it('a member key of the same org gets 403 on status and download', async () => {
    const job = await exportJob(acme.adminKey, { alarm_only: true });
    for (const path of [
      `/activity/export-jobs/${job.id}`,
      `/activity/export-jobs/${job.id}/download`,
    ]) {
      const res = await api.client(acme.memberKey).get(path);
      expect(res.status, path).toBe(403);
    }
  });

  it('the download is a 409 CONFLICT until the job has succeeded, saying where it stands', async () => {
    const base = queuedJob({
      id: 'ffffffffffffffffffff0001',
      org_id: acme.orgId,
      created_at: new Date().toISOString(),
      kind: 'activity_export',
      input: {
        filters: { since: null, until: null, alarmOnly: false },
        range: { after: null, before: 'ffffffffffffffffffffffff' },
        pageSize: 10,
      },
    });
    // Stored without a runner taking it up: a job queued behind others, or held by another worker.
    await api.stores.jobs.create(base);
    const queued = await api.client(acme.adminKey).get(`/activity/export-jobs/${base.id}/download`);
    expect(queued.status).toBe(409);
    expect(queued.body).toMatchObject({ error_code: 'CONFLICT', details: { status: 'queued' } });
    expect((queued.body as { message: string }).message).toMatch(/is queued/);

    await api.stores.jobs.update(base.id, { status: 'failed', error: 'store unreachable' });
    const failed = await api.client(acme.adminKey).get(`/activity/export-jobs/${base.id}/download`);
    expect(failed.status).toBe(409);
    expect((failed.body as { message: string }).message).toMatch(/failed \(store unreachable\)/);
    const status = expectShape(
      ActivityExportJob,
      (await api.client(acme.adminKey).get(`/activity/export-jobs/${base.id}`)).body,
    );
    expect(status).toMatchObject({ status: 'failed', error: 'store unreachable' });
  });

  it('streams with backpressure: a reader that stops early does not break the server', async () => {
    const job = await finished(acme.adminKey, (await exportJob(acme.adminKey, {})).id);
    const res = await download(acme.adminKey, job.id);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    await reader.cancel();
    // The server is still serving, and a full download still works.
    expect((await downloadedIds(acme.adminKey, job.id)).length).toBe(5000);
  });
});
