import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MonitorResponse, Policy } from '@guard/contracts';
import type { ScoreEngine } from '@guard/scoring';
import { expectShape } from '../testing/expect-shape.js';
import {
  startInProcessApi,
  stubEngine,
  type ApiClient,
  type InProcessApi,
} from '../testing/in-process.js';

/**
 * A policy's own fail mode and scoring timeout (`fail_mode`, `scoring_timeout_ms`): a scoring
 * that takes longer than the policy allows is answered by the policy's fail mode, and the
 * response and the activity say so. The engine here takes 2 s for any text that says "slow",
 * unless the call's signal gives up first.
 */
const inner = stubEngine();
const slowEngine: ScoreEngine = {
  score: (request, signal) => {
    if (!request.messages.some((m) => m.content.includes('slow'))) return inner.score(request);
    return new Promise((resolve, reject) => {
      const done = setTimeout(() => resolve(inner.score(request)), 2000);
      signal?.addEventListener('abort', () => {
        clearTimeout(done);
        reject(signal.reason as Error);
      });
    });
  },
};

let api: InProcessApi;
let client: ApiClient;
beforeAll(async () => {
  api = await startInProcessApi({ engine: slowEngine, config: { failMode: 'closed' } });
  client = api.client(api.adminKey);
});
afterAll(async () => {
  await api?.close();
});

const create = async (body: Record<string, unknown>) => {
  const res = await client.post('/policies', { name: 'p', categories: {}, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return expectShape(Policy, res.body);
};
const monitor = async (policyId: string, text: string) => {
  const started = Date.now();
  const res = await client.post('/guard/monitor', { text, policy_id: policyId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { body: expectShape(MonitorResponse, res.body), ms: Date.now() - started };
};

describe('a policy with its own fail mode and scoring timeout', () => {
  it('answers a scoring past its timeout by its fail mode, in the response and the activity', async () => {
    const open = await create({ fail_mode: 'fail_open', scoring_timeout_ms: 100 });
    expect(open).toMatchObject({ fail_mode: 'fail_open', scoring_timeout_ms: 100 });
    const r = await monitor(open.id, 'a slow one');
    expect(r.ms).toBeLessThan(1500);
    expect(r.body).toMatchObject({ error: true, violation: 0 });
    expect(r.body.error_message).toMatch(/scoring_timeout_ms \(100 ms\).*fail mode open/);
    const activity = (await api.stores.activities.list(api.defaultOrgId, { limit: 1000 })).items.at(
      -1,
    );
    expect(activity).toMatchObject({ policy_id: open.id, alarm: false });
    expect(activity?.pre_analysis).toMatchObject({ error: true, violation: 0 });

    // A fast scoring under the same policy is not affected.
    expect((await monitor(open.id, 'a quick one')).body.error).toBe(false);
  });

  it('fails closed by default, and null in an update goes back to the server default', async () => {
    const closed = await create({ scoring_timeout_ms: 100 });
    expect(closed.fail_mode).toBeUndefined();
    expect((await monitor(closed.id, 'slow')).body).toMatchObject({ error: true, violation: 1 });

    const open = await create({ fail_mode: 'fail_open', scoring_timeout_ms: 100 });
    const reset = await client.put(`/policies/${open.id}`, {
      fail_mode: null,
      scoring_timeout_ms: null,
    });
    expect(reset.status).toBe(200);
    const after = expectShape(Policy, reset.body);
    expect(after.fail_mode).toBeUndefined();
    expect(after.scoring_timeout_ms).toBeUndefined();
    // Back on the server's deadline (none in this test server): the slow scoring completes.
    const r = await monitor(open.id, 'slow again');
    expect(r.body.error).toBe(false);
    expect(r.ms).toBeGreaterThanOrEqual(1900);
  });

  it('refuses values it cannot apply with 422, naming the field', async () => {
    for (const [body, field] of [
      [{ fail_mode: 'sometimes' }, 'fail_mode'],
      [{ scoring_timeout_ms: 10 }, 'scoring_timeout_ms'],
      [{ scoring_timeout_ms: 1.5 }, 'scoring_timeout_ms'],
    ] as const) {
      const res = await client.post('/policies', { name: 'bad', ...body });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body)).toContain(field);
    }
  });
});
