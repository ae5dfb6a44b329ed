import { describe, expect, it } from 'vitest';
import { GuardMetrics, processMetrics } from './metrics.js';

/** The value of one sample line of the text exposition, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GuardMetrics', () => {
  it('counts requests and decisions under their labels, in the text exposition', async () => {
    const m = new GuardMetrics({ defaultMetrics: false });
    m.observeHttp('GET', '/policies/:policy_id', 200, 0.003);
    m.observeHttp('GET', '/policies/:policy_id', 200, 0.2);
    m.recordDecision({
      endpoint: 'monitor',
      policyId: 'p1',
      outcome: 'blocked',
      violations: [{ rule: 'no-pii', mode: 'block' }],
      failMode: null,
    });
    m.recordDecision({
      endpoint: 'monitor',
      policyId: null,
      outcome: 'error',
      violations: [],
      failMode: 'closed',
    });
    m.observeUpstream('openai', 'ok', 0.4);
    const text = await m.render();
    expect(m.contentType).toMatch(/^text\/plain/);
    expect(
      sample(
        text,
        'guard_http_requests_total{method="GET",route="/policies/:policy_id",status="200"}',
      ),
    ).toBe(2);
    expect(
      sample(
        text,
        'guard_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/policies/:policy_id"}',
      ),
    ).toBe(1);
    expect(
      sample(text, 'guard_decisions_total{endpoint="monitor",policy_id="p1",outcome="blocked"}'),
    ).toBe(1);
    expect(
      sample(text, 'guard_decisions_total{endpoint="monitor",policy_id="none",outcome="error"}'),
    ).toBe(1);
    expect(
      sample(text, 'guard_rule_violations_total{rule="no-pii",mode="block",policy_id="p1"}'),
    ).toBe(1);
    expect(sample(text, 'guard_fail_mode_total{mode="closed"}')).toBe(1);
    // Present before the first event, so that a rate has a zero to start from.
    expect(sample(text, 'guard_fail_mode_total{mode="open"}')).toBe(0);
    expect(
      sample(text, 'guard_upstream_duration_seconds_count{provider="openai",status="ok"}'),
    ).toBe(1);
    // No process metrics when asked for none.
    expect(text).not.toContain('process_cpu');
  });

  it('serves the listed counters of a stats object, each read when scraped', async () => {
    const m = new GuardMetrics({ defaultMetrics: false });
    const stats = { written: 0, batches: 0, lastAt: 'never' };
    m.countersOf(stats, {
      written: ['guard_ingester_written_total', 'written'],
      batches: ['guard_ingester_batches_total', 'batches'],
    });
    stats.written = 4;
    stats.batches = 2;
    const text = await m.render();
    expect(sample(text, 'guard_ingester_written_total')).toBe(4);
    expect(sample(text, 'guard_ingester_batches_total')).toBe(2);
    expect(text).not.toContain('lastAt');
  });

  it('reads collect-time values when scraped, keeps the last one when a read fails', async () => {
    const m = new GuardMetrics({ defaultMetrics: false });
    let depth: number | Error = 7;
    const stats = { scored: 0 };
    m.gaugeFrom('guard_scorer_queue_depth', 'queued', async () => {
      if (depth instanceof Error) throw depth;
      return depth;
    });
    m.counterFrom('guard_scorer_scored_total', 'scored', () => stats.scored);
    expect(sample(await m.render(), 'guard_scorer_queue_depth')).toBe(7);
    expect(sample(await m.render(), 'guard_scorer_scored_total')).toBe(0);
    depth = 3;
    stats.scored = 5;
    let text = await m.render();
    expect(sample(text, 'guard_scorer_queue_depth')).toBe(3);
    expect(sample(text, 'guard_scorer_scored_total')).toBe(5);
    depth = new Error('redis away');
    stats.scored = 9;
    text = await m.render();
    expect(sample(text, 'guard_scorer_queue_depth')).toBe(3);
    expect(sample(text, 'guard_scorer_scored_total')).toBe(9);
    // Registered again (a component restarted in this process): the new reader replaces the old.
    m.gaugeFrom('guard_scorer_queue_depth', 'queued', () => 11);
    expect(sample(await m.render(), 'guard_scorer_queue_depth')).toBe(11);
  });

  it('cuts long rule names, so that one policy cannot make a label of any size', async () => {
    const m = new GuardMetrics({ defaultMetrics: false });
    m.recordDecision({
      endpoint: 'monitor',
      policyId: 'p',
      outcome: 'observed',
      violations: [{ rule: 'r'.repeat(500), mode: 'observe' }],
      failMode: null,
    });
    expect(
      sample(
        await m.render(),
        `guard_rule_violations_total{rule="${'r'.repeat(64)}",mode="observe",policy_id="p"}`,
      ),
    ).toBe(1);
  });

  it('has one registry per process, with the Node process metrics', async () => {
    expect(processMetrics()).toBe(processMetrics());
    const text = await processMetrics().render();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });
});
