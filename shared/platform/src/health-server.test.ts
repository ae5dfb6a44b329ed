import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type RunningHealthServer } from './health-server.js';
import { GuardMetrics } from './metrics.js';

describe('probe server', () => {
  let running: RunningHealthServer | null = null;
  afterEach(async () => {
    await running?.close();
    running = null;
  });

  it('answers /healthz and /readyz from the probe, 503 when it says no', async () => {
    const state = { live: true, ready: false };
    running = await startHealthServer(
      { live: () => state.live, ready: () => state.ready },
      0,
      '127.0.0.1',
    );
    const get = async (p: string) => {
      const r = await fetch(`${running!.url}${p}`);
      return [r.status, await r.json()];
    };
    expect(await get('/healthz')).toEqual([200, { status: 'ok' }]);
    expect(await get('/readyz')).toEqual([503, { status: 'not ready' }]);
    state.ready = true;
    state.live = false;
    expect(await get('/readyz')).toEqual([200, { status: 'ready' }]);
    expect(await get('/healthz')).toEqual([503, { status: 'failed' }]);
    expect((await get('/activity'))[0]).toBe(404);
    expect((await fetch(`${running.url}/readyz`, { method: 'POST' })).status).toBe(405);
  });

  it('serves /metrics when given metrics, and 404 there without them', async () => {
    const probe = { live: () => true, ready: () => true };
    const metrics = new GuardMetrics({ defaultMetrics: false });
    const stats = { written: 4 };
    metrics.counterFrom('guard_ingester_written_total', 'written', () => stats.written);
    running = await startHealthServer(probe, 0, '127.0.0.1', metrics);
    const res = await fetch(`${running.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(metrics.contentType);
    expect(await res.text()).toMatch(/^guard_ingester_written_total 4$/m);
    expect((await fetch(`${running.url}/metrics`, { method: 'POST' })).status).toBe(405);
    await running.close();

    running = await startHealthServer(probe, 0, '127.0.0.1');
    expect((await fetch(`${running.url}/metrics`)).status).toBe(404);
  });
});
