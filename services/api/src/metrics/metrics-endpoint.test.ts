import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardMetrics } from '@guard/platform/metrics';
import { startInProcessApi, type ApiClient, type InProcessApi } from '../testing/in-process.js';

/**
 * GET /metrics of the API in process: what a Prometheus scrape finds after a few calls. Labels are
 * what dashboards and alerts select on, so they are checked exactly.
 */

const PRESET_BASIC = '000000000000000000000001';
const RULE = { secret_project: 'Never mention the codename "Project Falcon".' };

let api: InProcessApi;
let client: ApiClient;

beforeAll(async () => {
  api = await startInProcessApi({ engine: 'learned' });
  client = api.client(api.adminKey);
});
afterAll(async () => {
  await api?.close();
});

/** The value of one series in the text exposition, undefined when it is absent. */
async function scrape(url: string): Promise<(series: string) => number | undefined> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const lines = (await res.text()).split('\n');
  return (series) => {
    const line = lines.find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
}

describe('GET /metrics', () => {
  it('counts requests by route pattern, and decisions and rules by outcome, without a key', async () => {
    const blocked = await client.post('/guard/monitor', {
      text: 'Can you tell me the launch date of Project Falcon?',
      categories: RULE,
    });
    expect(blocked.body).toMatchObject({ violated_rules: [1] });
    const passed = await client.post('/guard/monitor', {
      text: 'Can you tell me the launch date of the new phone?',
      categories: RULE,
    });
    expect(passed.body).toMatchObject({ violation: 0 });
    // An error answered by the error handler, outside the router, still has its route pattern.
    expect((await client.get('/policies/ffffffffffffffffffffffff')).status).toBe(404);
    expect((await client.get('/no/such/path')).status).toBe(404);

    const value = await scrape(api.url);
    expect(
      value('guard_http_requests_total{method="POST",route="/guard/monitor",status="200"}'),
    ).toBe(2);
    expect(
      value('guard_http_request_duration_seconds_count{method="POST",route="/guard/monitor"}'),
    ).toBe(2);
    // The pattern, not the id; a path no route matched is one series, whatever the path.
    expect(
      value('guard_http_requests_total{method="GET",route="/policies/:policy_id",status="404"}'),
    ).toBe(1);
    expect(value('guard_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(
      value('guard_decisions_total{endpoint="monitor",policy_id="none",outcome="blocked"}'),
    ).toBe(1);
    expect(
      value('guard_decisions_total{endpoint="monitor",policy_id="none",outcome="passed"}'),
    ).toBe(1);
    expect(
      value('guard_rule_violations_total{rule="secret_project",mode="block",policy_id="none"}'),
    ).toBe(1);
  });

  it('times upstream calls per provider, with why there was no answer', async () => {
    // The harness's providers are a closed local port.
    const res = await client.post('/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello.' }],
    });
    expect(res.status).toBeGreaterThanOrEqual(500);
    const value = await scrape(api.url);
    expect(
      value('guard_upstream_duration_seconds_count{provider="openai",status="no_answer"}'),
    ).toBe(1);
  });

  it('counts a scoring failure as an error decision and a fail-mode event', async () => {
    const failing = await startInProcessApi({
      engine: { score: () => Promise.reject(new Error('scoring threads gone')) },
    });
    try {
      const res = await failing.client(failing.adminKey).post('/guard/monitor', { text: 'hi' });
      // The default org's default policy (the basic preset) applies; its fail mode is closed.
      expect(res.body).toMatchObject({ error: true, violation: 1, policy_id: PRESET_BASIC });
      const value = await scrape(failing.url);
      expect(
        value(
          `guard_decisions_total{endpoint="monitor",policy_id="${PRESET_BASIC}",outcome="error"}`,
        ),
      ).toBe(1);
      expect(value('guard_fail_mode_total{mode="closed"}')).toBe(1);
    } finally {
      await failing.close();
    }
  });

  it('is not served when metrics are off (GUARD_METRICS=false)', async () => {
    const off = await startInProcessApi({ metrics: null });
    try {
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('serves the registry it is given, Node process metrics included', async () => {
    const metrics = new GuardMetrics();
    const own = await startInProcessApi({ metrics });
    try {
      const value = await scrape(own.url);
      expect(value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    } finally {
      await own.close();
    }
  });
});
