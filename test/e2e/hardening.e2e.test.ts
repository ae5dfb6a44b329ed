/**
 * Issue 7, "No request can hurt another": each finding of the hostile-input review as a test
 * against the started server. They failed on the code before the fix (noted per block).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchActivity } from './support/activity-http.js';
import {
  client,
  startGuard,
  targetServer,
  type Client,
  type GuardServer,
  type TargetServer,
} from './support/guard-server.js';
import { defaultOrgId, makeOrg, type OrgKeys } from './support/orgs-http.js';

let server: TargetServer;
let api: Client;
let other: OrgKeys;

/** About `chars` characters of varied words, different on every call (scores are memoised by text). */
let salt = 0;
function distinctText(chars: number): string {
  const words = [
    'order',
    'shipped',
    'invoice',
    'weather',
    'garden',
    'meeting',
    'python',
    'river',
    'quarterly',
    'report',
  ];
  const out: string[] = [];
  let n = 0;
  salt++;
  for (let i = 0; n < chars; i++) {
    const w = `${words[(i * 7 + salt) % words.length]}${(i * 31 + salt) % 997}`;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
}

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const rawPost = (
  url: string,
  key: string,
  path: string,
  body: string,
  contentType: string | null = 'application/json',
) =>
  fetch(url + path, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      ...(contentType ? { 'content-type': contentType } : {}),
    },
    body,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

beforeAll(async () => {
  // Two scoring threads: the slow-and-fast test needs one free while the other scores.
  server = await targetServer({ env: { GUARD_SCORE_THREADS: '2' } });
  api = client(server.url, server.adminKey);
  other = await makeOrg(server.url, server.adminKey, 'bystander');
});
afterAll(async () => {
  await server?.stop();
});

// Before: 12,000 'x' took 23 s, "a"*50000+"!" 351 s, 4,000 '-' about 2 s.
describe('1. scoring time is linear, and nothing waits behind a long request', () => {
  const shapes: [string, string][] = [
    ['12,000 x', 'x'.repeat(12_000)],
    ['"a" * 50,000 + "!"', `${'a'.repeat(50_000)}!`],
    ['4,000 -', '-'.repeat(4_000)],
    ['4,000 =', '='.repeat(4_000)],
    ['4,000 .', '.'.repeat(4_000)],
    ['200,000 x (the limit)', 'x'.repeat(200_000)],
  ];
  for (const [name, text] of shapes) {
    it(`scores ${name} in well under the test timeout`, async () => {
      const started = Date.now();
      const res = await api.post('/guard/monitor', { text });
      expect(res.status).toBe(200);
      expect(res.body.error).toBe(false);
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  }

  it('answers /healthz at once while every scoring thread is busy', async () => {
    const long = Array.from({ length: 4 }, () =>
      api.post('/guard/monitor', { text: distinctText(199_000) }),
    );
    await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    const health = await fetch(`${server.url}/healthz`);
    const healthMs = Date.now() - t0;
    const results = await Promise.all(long);
    const longestMs = Date.now() - t0;
    expect(health.status).toBe(200);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(healthMs).toBeLessThan(Math.max(500, longestMs / 2));
  });

  it('answers a short request sent beside a long one first', async () => {
    const order: string[] = [];
    const long = api.post('/guard/monitor', { text: distinctText(199_000) }).then((r) => {
      order.push('long');
      return r;
    });
    await new Promise((r) => setTimeout(r, 10));
    const short = client(server.url, other.adminKey)
      .post('/guard/monitor', { text: 'What is the capital of France?' })
      .then((r) => {
        order.push('short');
        return r;
      });
    const [l, s] = await Promise.all([long, short]);
    expect([l.status, s.status]).toEqual([200, 200]);
    expect(order).toEqual(['short', 'long']);
  });
});

// Needs a server started with a 200 ms scoring deadline: skipped against E2E_BASE_URL.
describe.skipIf(!!process.env.E2E_BASE_URL)('the scoring deadline', () => {
  let slow: GuardServer;
  beforeAll(async () => {
    // A deadline far below what 1.5 million characters take to score.
    slow = await startGuard({
      env: {
        GUARD_SCORE_TIMEOUT_MS: '200',
        GUARD_SCORE_THREADS: '1',
        GUARD_MONITOR_MAX_CHARS: '2000000',
        GUARD_BODY_LIMIT: '4mb',
      },
    });
  });
  afterAll(async () => {
    await slow?.stop();
  });

  it('answers a call past its deadline with the fail mode, says so, and keeps serving', async () => {
    const c = client(slow.url, slow.adminKey);
    const res = await c.post('/guard/monitor', { text: distinctText(1_500_000) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ error: true, violation: 1 });
    expect(res.body.error_message).toMatch(/did not finish within 200 ms.*fail mode closed/);
    const activity = await fetchActivity(slow.url, slow.adminKey, res.body.activity_id as string);
    expect(activity?.pre_analysis?.error).toBe(true);
    // The thread that was stopped is replaced: a short call still scores.
    let ok = false;
    const until = Date.now() + 15_000;
    while (!ok && Date.now() < until)
      ok = (await c.post('/guard/monitor', { text: 'hello' })).body.error === false;
    expect(ok).toBe(true);
  });
});

// Before: metadata nested 4,500 levels answered 500 (RangeError while saving the activity) and
// made 374 of 800 concurrent requests from other keys fail; scanners_config nested 6,000 levels
// answered 500 on POST /policies, and bulk import answered 500 after creating its first item.
describe('2. deeply nested JSON is refused before any work, and fails nobody else', () => {
  it('refuses metadata nested 4,500 levels with 400 while 300 requests of another org all succeed', async () => {
    const bystander = client(server.url, other.adminKey);
    const normal = Array.from({ length: 300 }, (_, i) =>
      bystander.post('/guard/monitor', { text: `order ${i} shipped`, metadata: { i } }),
    );
    const deep = rawPost(
      server.url,
      server.adminKey,
      '/guard/monitor',
      `{"text": "hi", "metadata": {"a": ${nested(4_500)}}}`,
    );
    const [bad, ...rest] = await Promise.all([deep, ...normal]);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: true,
      error_code: 'BAD_REQUEST',
      details: { errors: [{ loc: ['body'], type: 'json_too_deep' }] },
    });
    expect(bad.body.message).toContain('nested deeper than 64 levels');
    expect(rest.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    for (const r of rest.slice(0, 5))
      expect(
        await fetchActivity(server.url, other.adminKey, r.body.activity_id as string),
      ).not.toBeNull();
  });

  it('accepts metadata nested within the limit and stores it', async () => {
    const res = await rawPost(
      server.url,
      server.adminKey,
      '/guard/monitor',
      `{"text": "hi", "metadata": {"a": ${nested(50)}}}`,
    );
    expect(res.status).toBe(200);
    const activity = await fetchActivity(
      server.url,
      server.adminKey,
      res.body.activity_id as string,
    );
    expect(activity?.metadata.a).toBeDefined();
  });

  it('refuses metadata over 16 KB with 422 naming the field', async () => {
    const res = await api.post('/guard/monitor', {
      text: 'hi',
      metadata: { blob: 'x'.repeat(20_000) },
    });
    expect(res.status).toBe(422);
    expect(res.body.details.errors[0].loc).toEqual(['body', 'metadata']);
    expect(res.body.message).toContain('at most 16384 bytes');
  });

  it('refuses scanners_config nested 6,000 levels on POST /policies with 400 in the validation body', async () => {
    const res = await rawPost(
      server.url,
      server.adminKey,
      '/policies',
      `{"name": "deep", "scanners_config": {"keywords": ${nested(6_000)}}}`,
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      detail: [
        { loc: ['body'], msg: 'JSON is nested deeper than 64 levels', type: 'json_too_deep' },
      ],
    });
  });

  it('refuses a too-deep bulk import as a whole, before creating anything', async () => {
    const body = `{"policies": [{"name": "bulk-first-good"}, {"name": "bulk-deep", "scanners_config": {"keywords": ${nested(6_000)}}}]}`;
    const res = await rawPost(server.url, server.adminKey, '/policies/bulk-import', body);
    expect(res.status).toBe(400);
    const all = await api.get('/policies?limit=1000');
    expect(all.body.policies.map((p: { name: string }) => p.name)).not.toContain('bulk-first-good');
  });

  it('reports an oversized scanners_config in bulk import on its own item; the good one gets its id', async () => {
    const res = await api.post('/policies/bulk-import', {
      policies: [
        { name: 'bulk-good' },
        {
          name: 'bulk-huge',
          scanners_config: { keywords: Array.from({ length: 9_000 }, (_, i) => `word${i}`) },
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 2, successful: 1, failed: 1 });
    expect(res.body.results[0]).toMatchObject({ name: 'bulk-good', success: true });
    expect(res.body.results[0].id).toMatch(/^[0-9a-f]{24}$/);
    expect(res.body.results[1]).toMatchObject({ name: 'bulk-huge', success: false, id: null });
    expect(res.body.results[1].error).toContain('scanners_config must be at most 65536 bytes');
  });
});

// Before: a worker killed with SIGKILL left requests it had been handed hanging until the client
// gave up (the primary accepted connections and held them until a worker took them).
// Starts its own cluster and signals its workers: skipped against E2E_BASE_URL.
describe.skipIf(!!process.env.E2E_BASE_URL)('3. a dying worker leaves no client hanging', () => {
  let cluster: GuardServer | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it('answers or resets every request when a stuck worker is killed', async () => {
    cluster = await startGuard({ env: { GUARD_WORKERS: '2' } });
    const pids = () => [
      ...new Set(
        cluster!.logs
          .filter((l) => l.includes('"guard listening"'))
          .map((l) => (JSON.parse(l) as { worker: number }).worker),
      ),
    ];
    const deadline = Date.now() + 15_000;
    while (pids().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const [victim] = pids();
    process.kill(victim!, 'SIGSTOP');
    let killed = false;
    try {
      const started = Date.now();
      const calls = Array.from({ length: 12 }, () =>
        fetch(`${cluster!.url}/healthz`, { signal: AbortSignal.timeout(8_000) }).then(
          (r) => ({ ok: r.status === 200, ms: Date.now() - started }),
          (err: Error) => ({ ok: false, ms: Date.now() - started, err: err.name }),
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      process.kill(victim!, 'SIGKILL');
      killed = true;
      const results = await Promise.all(calls);
      // None waited for a client-side timeout: each was answered by the live worker or reset at once.
      expect(results.filter((r) => 'err' in r && r.err === 'TimeoutError')).toEqual([]);
      expect(Math.max(...results.map((r) => r.ms))).toBeLessThan(5_000);
    } finally {
      // Only if the kill above did not run: a pid signalled again once its process is gone may
      // already belong to another process (pids wrap at 32768 on small machines).
      if (!killed) process.kill(victim!, 'SIGKILL');
    }
  });
});

// Before: `rules` was dropped (201 with no rules; an update changed nothing and recorded an empty
// version); `scanners_config` on monitor was ignored; set-default-policy took any id, and nothing
// said which policy applied.
describe('4. mistakes are understood or refused, never silently dropped', () => {
  it('accepts `rules` as the alias of `categories` on create, update and import', async () => {
    const created = await api.post('/policies', { name: 'alias', rules: { no_spam: 'No spam' } });
    expect(created.status).toBe(201);
    expect(created.body.rules).toEqual({ no_spam: 'No spam' });
    const updated = await api.put(`/policies/${created.body.id}`, {
      rules: { no_spam: 'No spam', no_ads: 'No ads' },
    });
    expect(updated.body.rules).toEqual({ no_spam: 'No spam', no_ads: 'No ads' });
    const versions = (await api.get(`/policies/${created.body.id}/versions`)).body.versions;
    expect(versions[0].diff).toEqual([{ op: 'add', path: '/rules/no_ads', new: 'No ads' }]);
    const imported = await api.post('/policies/import', {
      policy: { name: 'alias import', rules: { a: 'No spam' } },
    });
    expect(imported.body.rules).toEqual({ a: 'No spam' });
  });

  it('refuses both spellings at once, and any unknown field by name', async () => {
    const both = await api.post('/policies', {
      name: 'x',
      rules: { a: 'b' },
      categories: { a: 'b' },
    });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(['body', 'rules']);
    const unknown = await api.post('/policies', { name: 'x', rulez: { a: 'b' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toEqual([
      { loc: ['body', 'rulez'], msg: 'unknown field "rulez"', type: 'extra_forbidden' },
    ]);
    const p = (await api.post('/policies', { name: 'strict update' })).body;
    const bad = await api.put(`/policies/${p.id}`, { treshold: 0.4 });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'treshold']);
    expect((await api.get(`/policies/${p.id}/versions`)).body.total).toBe(1);
  });

  it('applies `scanners_config` sent to monitor (the policy spelling)', async () => {
    const text = 'Reach me at jane.doe@example.com';
    const plain = await api.post('/guard/monitor', { text, policy_id: '000000000000000000000001' });
    expect(
      plain.body.violated_rule_descriptions.map((d: { name: string }) => d.name),
    ).not.toContain('pii');
    const res = await api.post('/guard/monitor', {
      text,
      scanners_config: { pii: { enabled: true, action: 'block' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.violated_rule_descriptions.map((d: { name: string }) => d.name)).toContain(
      'pii',
    );
    const both = await api.post('/guard/monitor', {
      text,
      scanners_config: { pii: true },
      scanner_configs: { pii: true },
    });
    expect(both.status).toBe(422);
  });

  it('says which policy applied, in the response and the activity', async () => {
    const own = (await api.post('/policies', { name: 'applied', categories: { a: 'No spam' } }))
      .body;
    const explicit = await api.post('/guard/monitor', { text: 'hello', policy_id: own.id });
    expect(explicit.body).toMatchObject({ policy_id: own.id, policy_ids: [own.id] });
    const activity = await fetchActivity(
      server.url,
      server.adminKey,
      explicit.body.activity_id as string,
    );
    expect(activity?.policy_id).toBe(own.id);
    const fallback = await client(server.url, other.adminKey).post('/guard/monitor', {
      text: 'hello',
    });
    expect(fallback.body.policy_id).toBe('000000000000000000000001');
    const inline = await api.post('/guard/monitor', {
      text: 'hello',
      categories: { a: 'No spam' },
    });
    expect(inline.body).toMatchObject({ policy_id: null, policy_ids: [] });
  });

  it("refuses a default policy the org cannot read: unknown, or another org's", async () => {
    const foreign = (await client(server.url, other.adminKey).post('/policies', { name: 'theirs' }))
      .body;
    const orgId = await defaultOrgId(server.url, server.adminKey);
    const setDefault = (policy_id: string | null) =>
      api.put(`/orgs/${orgId}/default-policy`, { policy_id });
    for (const unreadable of [foreign.id, 'ffffffffffffffffffffffff']) {
      const res = await setDefault(unreadable);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error_code: 'NOT_FOUND' });
      expect(res.body.message).toMatch(/not found/);
    }
    const mine = (await api.post('/policies', { name: 'mine' })).body;
    let cleared;
    try {
      expect((await setDefault(mine.id)).body).toMatchObject({ default_policy_id: mine.id });
      expect((await setDefault('000000000000000000000002')).body).toMatchObject({
        default_policy_id: '000000000000000000000002',
      });
    } finally {
      // Cleared even when a check fails: on a shared server (E2E_BASE_URL) other files come next.
      cleared = await setDefault(null);
    }
    expect(cleared.body).toMatchObject({ default_policy_id: null });
  });
});

// Before: null and "hello" answered 400 "not valid JSON"; no content type answered 422 "expected
// object, received undefined"; wrong types said "missing"; limit=abc said "received NaN"; rule
// names out of range said "Invalid key in record"; malformed JSON was 400 here and 422 there.
describe('5. one status per kind of mistake, with the field and the expected form', () => {
  it("malformed JSON is a 400 on every endpoint, in each endpoint's body", async () => {
    const m = await rawPost(server.url, server.adminKey, '/guard/monitor', '{"text": ');
    expect(m.status).toBe(400);
    expect(m.body).toMatchObject({
      error: true,
      error_code: 'BAD_REQUEST',
      details: { errors: [{ loc: ['body'], type: 'json_invalid' }] },
    });
    const p = await rawPost(server.url, server.adminKey, '/policies', '{"name": ');
    expect(p.status).toBe(400);
    expect(p.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    expect(p.body.detail[0].msg).toMatch(/^Request body is not valid JSON: /);
  });

  for (const [what, raw, got] of [
    ['null', 'null', 'null'],
    ['a string', '"hello"', '"hello"'],
    ['an array', '[1, 2]', 'an array'],
  ] as const) {
    it(`a body that is ${what} is a 422 that says an object was expected`, async () => {
      const m = await rawPost(server.url, server.adminKey, '/guard/monitor', raw);
      expect(m.status).toBe(422);
      expect(m.body.details.errors[0]).toMatchObject({
        loc: ['body'],
        msg: `The body must be a JSON object, got ${got}`,
      });
      const p = await rawPost(server.url, server.adminKey, '/policies', raw);
      expect(p.status).toBe(422);
      expect(p.body.detail[0].msg).toBe(`The body must be a JSON object, got ${got}`);
    });
  }

  it('a body sent without a JSON content type is a 415; no body at all is a 422 saying one is required', async () => {
    const form = await rawPost(
      server.url,
      server.adminKey,
      '/guard/monitor',
      'text=hello',
      'application/x-www-form-urlencoded',
    );
    expect(form.status).toBe(415);
    expect(form.body).toMatchObject({ error: true, error_code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(form.body.message).toContain('application/json');
    const none = await rawPost(server.url, server.adminKey, '/policies', '{"name": "x"}', null);
    expect(none.status).toBe(415);
    const empty = await api.post('/guard/monitor');
    expect(empty.status).toBe(422);
    expect(empty.body.details.errors[0]).toMatchObject({ loc: ['body'], type: 'missing' });
    expect(empty.body.message).toContain('JSON object body is required');
  });

  it('a wrong type names what was expected and what came, and is not called missing', async () => {
    const res = await api.post('/policies', { name: 5 });
    expect(res.body.detail).toEqual([
      { loc: ['body', 'name'], msg: 'expected string, got number', type: 'string_type' },
    ]);
    const m = await api.post('/guard/monitor', { text: ['a'] });
    expect(m.body.details.errors[0]).toMatchObject({
      loc: ['body', 'text'],
      msg: 'expected string, got an array',
      type: 'string_type',
    });
    const missing = await api.post('/policies', {});
    expect(missing.body.detail).toEqual([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('query numbers name the bad value and the range', async () => {
    const abc = await api.get('/policies?limit=abc');
    expect(abc.status).toBe(422);
    expect(abc.body.detail[0]).toMatchObject({
      loc: ['query', 'limit'],
      msg: 'expected a whole number, got "abc"',
    });
    const big = await api.get('/policies?limit=5000');
    expect(big.body.detail[0]).toMatchObject({
      loc: ['query', 'limit'],
      msg: 'must be at most 1000',
    });
  });

  it('rule names out of range say what a name must be', async () => {
    const empty = await api.post('/policies', { name: 'x', categories: { '': 'No spam' } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({
      loc: ['body', 'categories', ''],
      msg: 'invalid name "": names must be at least 1 character long',
    });
    const long = await api.post('/policies', {
      name: 'x',
      categories: { ['n'.repeat(256)]: 'No spam' },
    });
    expect(long.body.detail[0].msg).toContain('names must be at most 255 characters long');
  });
});

// Found by the fuzz suite (test/e2e/fuzz.e2e.test.ts): names every object inherits, `__proto__`,
// and an empty body sent as JSON.
describe('names that JavaScript objects treat specially', () => {
  it('keeps rules named like inherited properties as ordinary rules, with a true history', async () => {
    const p = (
      await api.post('/policies', {
        name: 'inherited',
        categories: { r1: 'No spam', constructor: 'No ads' },
      })
    ).body;
    const modes = await api.put(`/policies/${p.id}`, { rule_modes: { constructor: 'observe' } });
    expect(modes.status).toBe(200);
    const removed = await api.put(`/policies/${p.id}`, { categories: { r1: 'No spam' } });
    expect(removed.status).toBe(200);
    expect(removed.body.rules).toEqual({ r1: 'No spam' });
    expect(removed.body.rule_modes).toEqual({});
    const added = await api.put(`/policies/${p.id}`, {
      categories: { r1: 'No spam', toString: 'No spam either' },
    });
    const versions = (await api.get(`/policies/${p.id}/versions`)).body.versions;
    expect(versions[0].diff).toEqual([
      { op: 'add', path: '/rules/toString', new: 'No spam either' },
    ]);
    const before = (await api.get(`/policies/${p.id}/versions/${versions[1].id}`)).body
      .policy_state;
    expect(before.rules).toEqual({ r1: 'No spam' });
    expect(added.body.rules).toEqual({ r1: 'No spam', toString: 'No spam either' });
    const bad = await api.post('/policies', {
      name: 'x',
      categories: { a: 'b' },
      rule_modes: { hasOwnProperty: 'observe' },
    });
    expect(bad.status).toBe(422);
  });

  it('refuses `__proto__` as a name, so no rule silently disappears', async () => {
    const m = await api.post('/guard/monitor', {
      text: 'Where is Project Falcon hosted?',
      categories: JSON.parse('{"__proto__": "Never mention Project Falcon"}'),
    });
    expect(m.status).toBe(422);
    expect(m.body.details.errors[0].loc).toEqual(['body', 'categories', '__proto__']);
    const p = await rawPost(
      server.url,
      server.adminKey,
      '/policies',
      '{"name": "x", "rules": {"\\u005f_proto__": "No spam"}}',
    );
    expect(p.status).toBe(422);
  });

  it('an empty body sent as JSON is a missing body, not an empty update', async () => {
    const p = (await api.post('/policies', { name: 'empty put' })).body;
    const res = await fetch(`${server.url}/policies/${p.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
      body: '',
    });
    expect(res.status).toBe(422);
    expect((await api.get(`/policies/${p.id}/versions`)).body.total).toBe(1);
  });
});
