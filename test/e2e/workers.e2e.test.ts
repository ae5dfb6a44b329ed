import http from 'node:http';
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

/** One request on a connection of its own, so that successive calls reach different workers. */
function freshGet(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers: { authorization: `Bearer ${key}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/** Worker pids whose access log has a request to `path` after log line `from`. */
const servedBy = (s: GuardServer, from: number, path: string) =>
  new Set(
    s.logs
      .slice(from)
      .filter((l) => l.includes(`"path":"${path}"`))
      .map((l) => (JSON.parse(l) as { worker?: number }).worker)
      .filter((w) => w !== undefined),
  );

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

  it('applies a key revoked through one worker in every worker at once, however long the cache TTL', async () => {
    server = await startGuard({
      env: { GUARD_WORKERS: '2', GUARD_AUTH_CACHE_TTL_MS: '600000' },
    });
    const api = client(server.url, server.adminKey);
    const org = (await api.post('/orgs', { name: 'revokers', kind: 'standard' })).body;
    const made = (
      await api.post(`/orgs/${org.id}/keys`, { role: 'member', user_id: 'bot', name: 'bot' })
    ).body;
    const probe = `${server.url}/policies`;
    const before = server.logs.length;
    // Every worker has the key cached (the kernel picks which accepts each connection: call
    // until both have served, at least 30 times)...
    let calls = 0;
    while (calls < 400 && (calls < 30 || servedBy(server, before, '/policies').size < 2)) {
      expect(await freshGet(probe, made.key)).toBe(200);
      calls++;
    }
    expect(servedBy(server, before, '/policies').size).toBe(2);
    // ...when one of them revokes it.
    expect((await api.call('DELETE', `/orgs/${org.id}/keys/${made.id}`)).body.revoked).toBe(true);
    const after = server.logs.length;
    const statuses = [];
    while (
      statuses.length < 400 &&
      (statuses.length < 30 || servedBy(server, after, '/policies').size < 2)
    )
      statuses.push(await freshGet(probe, made.key));
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(servedBy(server, after, '/policies').size).toBe(2);
    expect(await server.stop()).toBe(0);
    server = undefined;
  });

  it('answers a metrics scrape for every worker, whichever takes it', async () => {
    server = await startGuard({ env: { GUARD_WORKERS: '2' } });
    const probe = `${server.url}/policies`;
    const before = server.logs.length;
    // Until both workers have served some (the kernel picks which accepts each connection).
    let calls = 0;
    while (calls < 400 && (calls < 20 || servedBy(server, before, '/policies').size < 2)) {
      expect(await freshGet(probe, server.adminKey)).toBe(200);
      calls++;
    }
    expect(servedBy(server, before, '/policies').size).toBe(2);
    const series = 'guard_http_requests_total{method="GET",route="/policies",status="200"}';
    // Several scrapes, on fresh connections: each worker answers some, and every answer counts
    // the calls of both.
    const scraped = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const text = await new Promise<string>((resolve, reject) => {
        http
          .get(`${server!.url}/metrics`, { agent: false }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (body += d));
            res.on('end', () => resolve(body));
          })
          .on('error', reject);
      });
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      scraped.add(Number(line?.slice(series.length + 1)));
    }
    expect([...scraped]).toEqual([calls]);
    expect(await server.stop()).toBe(0);
    server = undefined;
  });
});
