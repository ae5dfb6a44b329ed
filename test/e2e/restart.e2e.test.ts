import { afterAll, describe, expect, it } from 'vitest';
import { client, startGuard, tempDataDir, type GuardServer } from './support/guard-server.js';

let running: GuardServer | undefined;
afterAll(async () => {
  await running?.stop();
});

// Stops and restarts its own server on one data directory: skipped against E2E_BASE_URL.
describe.skipIf(!!process.env.E2E_BASE_URL)('restart', () => {
  it('keeps orgs, keys, policies and versions across a stop and start', async () => {
    const dataDir = tempDataDir();
    const first = await startGuard({ dataDir, env: { GUARD_BOOTSTRAP_ADMIN_KEY: '' } });
    running = first;
    // The banner is printed right after the listening line: give it a moment to arrive.
    let key: string | undefined;
    for (let i = 0; i < 50 && !key; i++) {
      key = /^\s+(gk_[A-Za-z0-9]{40})\s*$/m.exec(first.logs.join('\n'))?.[1];
      if (!key) await new Promise((r) => setTimeout(r, 50));
    }
    expect(key, 'first start prints a generated admin key').toBeDefined();
    const c1 = client(first.url, key!);
    const p = (await c1.post('/policies', { name: 'durable', categories: { a: 'rule a' } })).body;
    await c1.put(`/policies/${p.id}`, { description: 'second version' });
    const before = (await c1.get(`/policies/${p.id}/versions`)).body;
    expect(await first.stop(), first.logs.slice(-20).join('\n')).toBe(0);

    const second = await startGuard({ dataDir, env: { GUARD_BOOTSTRAP_ADMIN_KEY: '' } });
    running = second;
    expect(second.logs.join('\n')).not.toMatch(/gk_[A-Za-z0-9]{40}/);
    expect(second.logs.join('\n')).not.toContain('first start');
    const c2 = client(second.url, key!);
    const got = await c2.get(`/policies/${p.id}`);
    expect(got.status).toBe(200);
    expect(got.body.description).toBe('second version');
    expect((await c2.get(`/policies/${p.id}/versions`)).body).toEqual(before);
    expect((await c2.get('/policies')).body.total).toBe(5);
  });
});
