import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody, MonitorResponse } from '@guard/contracts';
import { expectShape } from '../testing/expect-shape.js';
import { startInProcessApi, type InProcessApi } from '../testing/in-process.js';

/** API keys on every authenticated family of endpoints, in process over the memory stores. */

let api: InProcessApi;

beforeAll(async () => {
  // The access log on, to check what a request leaves in the logs.
  api = await startInProcessApi({ config: { accessLog: true } });
});
afterAll(async () => {
  await api?.close();
});

const AUTHENTICATED: [string, string, unknown][] = [
  ['GET', '/policies', undefined],
  ['GET', '/orgs', undefined],
  ['POST', '/guard/monitor', { text: 'hi' }],
];

describe('authentication', () => {
  it('accepts the key as Bearer, x-api-key or x-goog-api-key', async () => {
    for (const header of ['bearer', 'x-api-key', 'x-goog-api-key'] as const) {
      const c = api.client(api.adminKey, header);
      for (const [method, path, body] of AUTHENTICATED) {
        expect((await c.call(method, path, body)).status, `${header} ${method} ${path}`).toBe(200);
      }
    }
  });

  it('answers 401 UNAUTHORIZED without a key, with a wrong key, or with another scheme', async () => {
    const callers = [
      api.client(null),
      api.client('gk_wrong'),
      api.client(api.adminKey.toUpperCase()),
      api.client('x'.repeat(600)),
    ];
    for (const c of callers) {
      for (const [method, path, body] of AUTHENTICATED) {
        const res = await c.call(method, path, body);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(expectShape(ErrorBody, res.body).error_code).toBe('UNAUTHORIZED');
      }
    }
    const basic = await api
      .client(null)
      .get('/policies', { headers: { authorization: 'Basic abc' } });
    expect(basic.status).toBe(401);
  });

  it('refuses a key as soon as it is revoked (no auth cache in front of these stores)', async () => {
    const org = await api.makeOrg('revocation');
    const c = api.client(org.memberKey);
    expect((await c.get('/policies')).status).toBe(200);
    const revoked = await api
      .client(org.adminKey)
      .del(`/orgs/${org.orgId}/keys/${org.memberKeyId}`);
    expect(revoked.status).toBe(200);
    expect((await c.get('/policies')).status).toBe(401);
  });

  it('leaves the ops endpoints open', async () => {
    const anon = api.client(null);
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      expect((await anon.get(path)).status, path).toBe(200);
    }
  });

  it('never logs the key, and logs the route and who asked', async () => {
    const res = await api.client(api.adminKey).post('/guard/monitor', { text: 'log me' });
    const activityId = expectShape(MonitorResponse, res.body).activity_id;
    expect(api.logs.join('\n')).not.toContain(api.adminKey);
    const line = api.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'request' && l.route === '/guard/monitor');
    expect(line).toMatchObject({ method: 'POST', status: 200, org_id: api.defaultOrgId });
    expect(activityId).toMatch(/^[0-9a-f]{24}$/);
  });
});
