import { afterAll, describe, expect, it } from 'vitest';
import { client, startGuard, type GuardServer } from './support/guard-server.js';

let server: GuardServer | undefined;
afterAll(async () => {
  await server?.stop();
});

const workerPids = (s: GuardServer) => [
  ...new Set(
    s.logs
      .filter((l) => l.includes('"guard listening"'))
      .map((l) => (JSON.parse(l) as { worker: number }).worker),
  ),
];

// Starts its own cluster and kills a worker: skipped against E2E_BASE_URL.
describe.skipIf(!!process.env.E2E_BASE_URL)('GUARD_WORKERS=2', () => {
  it('serves from several processes over one store and replaces a worker that dies', async () => {
    server = await startGuard({ env: { GUARD_WORKERS: '2' } });
    const api = client(server.url, server.adminKey);
    const created = (await api.post('/policies', { name: 'shared', categories: { a: 'No spam' } }))
      .body;
    for (let i = 0; i < 20; i++)
      expect((await api.get(`/policies/${created.id}`)).status).toBe(200);

    const deadline = Date.now() + 10_000;
    while (workerPids(server).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const [victim] = workerPids(server);
    process.kill(victim!, 'SIGKILL');
    while (workerPids(server).length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(workerPids(server).length).toBe(3);
    expect(server.logs.join('\n')).toContain('worker died; starting a new one');
    for (let i = 0; i < 20; i++)
      expect((await api.get(`/policies/${created.id}`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    server = undefined;
  });
});
