import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type RunningHealthServer } from './health-server.js';

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
});
