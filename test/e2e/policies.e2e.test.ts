import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  client,
  settleWithin,
  targetServer,
  type Client,
  type TargetServer,
} from './support/guard-server.js';
import {
  createKey,
  defaultOrgId,
  makeOrg,
  statusOnceRevoked,
  type OrgKeys,
} from './support/orgs-http.js';

const PRESET_NAMES = [
  'Basic Content Safety',
  'Prompt Injection Protection',
  'PII Protection',
  'Coding Agent',
];

let server: TargetServer;
let admin: Client;
let member: Client;
let other: Client;
let otherOrg: OrgKeys;

beforeAll(async () => {
  server = await targetServer();
  admin = client(server.url, server.adminKey);
  const orgId = await defaultOrgId(server.url, server.adminKey);
  const m = await createKey(server.url, server.adminKey, orgId, { user_id: 'bob', role: 'member' });
  member = client(server.url, m.key);
  otherOrg = await makeOrg(server.url, server.adminKey, 'other');
  other = client(server.url, otherOrg.adminKey);
});

afterAll(async () => {
  await server?.stop();
});

const sample = (over: Record<string, unknown> = {}) => ({
  name: 'Support bot',
  description: 'Rules for the support assistant',
  categories: { no_violence: 'No violent content', no_pii: 'Do not reveal personal data' },
  rule_modes: { no_pii: 'observe' },
  ...over,
});

describe('create and read', () => {
  it('creates with 201, fills defaults and reads it back', async () => {
    const res = await admin.post('/policies', sample());
    expect(res.status).toBe(201);
    const p = res.body;
    expect(p.id).toMatch(/^[0-9a-f]{24}$/);
    expect(p).toMatchObject({
      name: 'Support bot',
      rules: { no_violence: 'No violent content', no_pii: 'Do not reveal personal data' },
      rule_modes: { no_pii: 'observe' },
      mode: 'content_moderation',
      pre_violation_threshold: 0.5,
      pre_jb_threshold: 0.3,
      post_violation_threshold: 0.5,
      post_violation_jb_threshold: 0.3,
      scanners_config: {},
      block_message: "Sorry, I can't help with that.",
      is_preset: false,
    });
    expect(p).not.toHaveProperty('org_id');
    expect(p).not.toHaveProperty('categories');
    expect(Date.parse(p.created_at)).not.toBeNaN();
    expect(p.updated_at).toBe(p.created_at);
    const got = await member.get(`/policies/${p.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(p);
  });

  it('accepts the disabled rule mode and a block message', async () => {
    const res = await admin.post(
      '/policies',
      sample({ rule_modes: { no_pii: 'disabled' }, block_message: 'Nope.' }),
    );
    expect(res.status).toBe(201);
    expect(res.body.rule_modes).toEqual({ no_pii: 'disabled' });
    expect(res.body.block_message).toBe('Nope.');
  });

  it('lists most recently updated first, presets last, with limit/offset/has_more', async () => {
    const a = (await admin.post('/policies', sample({ name: 'list-a' }))).body;
    const b = (await admin.post('/policies', sample({ name: 'list-b' }))).body;
    await admin.put(`/policies/${a.id}`, { description: 'touched' });
    const all = await member.get('/policies');
    expect(all.status).toBe(200);
    expect(all.body.limit).toBeNull();
    expect(all.body.offset).toBe(0);
    expect(all.body.has_more).toBe(false);
    expect(all.body.total).toBe(all.body.policies.length);
    const names: string[] = all.body.policies.map((p: { name: string }) => p.name);
    expect(names[0]).toBe('list-a');
    expect(names[1]).toBe('list-b');
    expect(names.slice(-PRESET_NAMES.length).sort()).toEqual([...PRESET_NAMES].sort());
    const updated = all.body.policies
      .filter((p: { is_preset: boolean }) => !p.is_preset)
      .map((p: { updated_at: string }) => p.updated_at);
    expect([...updated].sort().reverse()).toEqual(updated);

    const page = await member.get('/policies?limit=1&offset=1');
    expect(page.body).toMatchObject({ total: all.body.total, limit: 1, offset: 1, has_more: true });
    expect(page.body.policies.map((p: { id: string }) => p.id)).toEqual([b.id]);
    const last = await member.get(`/policies?limit=1000&offset=${all.body.total - 1}`);
    expect(last.body.policies).toHaveLength(1);
    expect(last.body.has_more).toBe(false);
    const beyond = await member.get(`/policies?limit=5&offset=${all.body.total + 3}`);
    expect(beyond.body.policies).toEqual([]);
    expect(beyond.body.has_more).toBe(false);
  });
});

describe('update and delete', () => {
  it('changes only the provided fields and drops modes of removed rules', async () => {
    const p = (await admin.post('/policies', sample({ pre_jb_threshold: 0.2 }))).body;
    const res = await admin.put(`/policies/${p.id}`, { description: 'new description' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...p,
      description: 'new description',
      updated_at: res.body.updated_at,
    });
    expect(res.body.updated_at >= p.updated_at).toBe(true);

    const res2 = await admin.put(`/policies/${p.id}`, {
      categories: { no_violence: 'No violence at all' },
    });
    expect(res2.body.rules).toEqual({ no_violence: 'No violence at all' });
    expect(res2.body.rule_modes).toEqual({});
    expect(res2.body.pre_jb_threshold).toBe(0.2);
  });

  it('rejects rule_modes for rules the updated policy does not have', async () => {
    const p = (await admin.post('/policies', sample())).body;
    const res = await admin.put(`/policies/${p.id}`, { rule_modes: { ghost: 'block' } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'rule_modes', 'ghost']);
    expect((await admin.get(`/policies/${p.id}`)).body).toEqual(p);
  });

  it('deletes with {id, deleted}, then the policy is gone but its versions remain', async () => {
    const p = (await admin.post('/policies', sample({ name: 'to delete' }))).body;
    const del = await admin.del(`/policies/${p.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: p.id, deleted: true });
    expect((await admin.get(`/policies/${p.id}`)).status).toBe(404);
    expect((await admin.del(`/policies/${p.id}`)).status).toBe(404);
    expect((await admin.put(`/policies/${p.id}`, { name: 'x' })).status).toBe(404);
    const versions = await admin.get(`/policies/${p.id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { operation: string }) => v.operation)).toEqual([
      'delete',
      'create',
    ]);
    const atDelete = await admin.get(`/policies/${p.id}/versions/${versions.body.versions[0].id}`);
    expect(atDelete.body.policy_state.name).toBe('to delete');
    const list = await admin.get('/policies');
    expect(list.body.policies.some((x: { id: string }) => x.id === p.id)).toBe(false);
  });

  it('answers 404 with the standard body for unknown ids', async () => {
    const res = await admin.get('/policies/ffffffffffffffffffffffff');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: true, error_code: 'NOT_FOUND' });
    expect(typeof res.body.message).toBe('string');
    expect((await admin.get('/policies/not-an-id/versions')).status).toBe(404);
    expect((await admin.get('/policies/not-an-id/export')).status).toBe(404);
  });
});

describe('export and import', () => {
  it('exports one policy and all policies with export_version 1.0', async () => {
    const p = (
      await admin.post(
        '/policies',
        sample({ name: 'exported', scanners_config: { pii: { enabled: true } } }),
      )
    ).body;
    const one = await member.get(`/policies/${p.id}/export`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      name: 'exported',
      description: p.description,
      categories: p.rules,
      rule_modes: p.rule_modes,
      mode: p.mode,
      pre_violation_threshold: 0.5,
      pre_jb_threshold: 0.3,
      post_violation_threshold: 0.5,
      post_violation_jb_threshold: 0.3,
      scanners_config: { pii: { enabled: true } },
      block_message: p.block_message,
      export_version: '1.0',
    });
    const all = await member.get('/policies/export');
    expect(all.status).toBe(200);
    expect(all.body.export_version).toBe('1.0');
    expect(Date.parse(all.body.export_date)).not.toBeNaN();
    expect(all.body.total).toBe(all.body.policies.length);
    expect(all.body.total).toBe((await member.get('/policies')).body.total);
    expect(all.body.policies.some((x: { name: string }) => x.name === 'exported')).toBe(true);
  });

  it('imports an export round-trip with a new id, ignoring ids in the payload', async () => {
    const p = (await admin.post('/policies', sample({ name: 'round trip' }))).body;
    const exported = (await admin.get(`/policies/${p.id}/export`)).body;
    const res = await admin.post('/policies/import', {
      policy: { ...exported, id: p.id, _id: 'x' },
    });
    expect(res.status).toBe(200);
    expect(res.body.id).not.toBe(p.id);
    expect(res.body.rules).toEqual(p.rules);
    expect(res.body.rule_modes).toEqual(p.rule_modes);
    const versions = await admin.get(`/policies/${res.body.id}/versions`);
    expect(versions.body.versions[0].operation).toBe('import');
    expect(
      (await admin.post('/policies/import', { policy: { description: 'no name' } })).status,
    ).toBe(422);
    expect((await admin.post('/policies/import', {})).body.detail[0].loc).toEqual([
      'body',
      'policy',
    ]);
  });

  it('bulk imports a mix: good items succeed, bad ones report why', async () => {
    const res = await admin.post('/policies/bulk-import', {
      policies: [
        { name: 'bulk-good-1', categories: { a: 'rule a' } },
        { description: 'missing name' },
        { name: 'bulk-bad-mode', categories: { a: 'rule a' }, rule_modes: { a: 'sometimes' } },
        { name: 'bulk-mismatch', categories: { a: 'rule a' }, rule_modes: { b: 'block' } },
        'not an object',
        { name: 'bulk-good-2', pre_violation_threshold: 0.7 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(6);
    expect(res.body.successful).toBe(2);
    expect(res.body.failed).toBe(4);
    const r = res.body.results;
    expect(r.map((x: { success: boolean }) => x.success)).toEqual([
      true,
      false,
      false,
      false,
      false,
      true,
    ]);
    expect(r[0].id).toMatch(/^[0-9a-f]{24}$/);
    expect(r[1].error).toMatch(/name/);
    expect(r[2]).toMatchObject({ name: 'bulk-bad-mode', id: null });
    expect(r[3].error).toMatch(/rule_modes/);
    const created = await admin.get(`/policies/${r[5].id}`);
    expect(created.body.pre_violation_threshold).toBe(0.7);
    expect((await admin.get(`/policies/${r[0].id}/versions`)).body.versions[0].operation).toBe(
      'bulk_import',
    );
  });

  it('rejects an empty or oversized bulk import', async () => {
    expect((await admin.post('/policies/bulk-import', { policies: [] })).status).toBe(422);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ name: `p${i}` }));
    const res = await admin.post('/policies/bulk-import', { policies: tooMany });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'policies']);
    expect((await admin.post('/policies/bulk-import', { policies: 'x' })).status).toBe(422);
  });
});

describe('versions', () => {
  it('lists versions newest first and reads any version back as the full state', async () => {
    const created = (await admin.post('/policies', sample({ name: 'v0' }))).body;
    const s1 = (
      await admin.put(`/policies/${created.id}`, { name: 'v1', categories: { only: 'one rule' } })
    ).body;
    const s2 = (
      await admin.put(`/policies/${created.id}`, {
        pre_violation_threshold: 0.9,
        rule_modes: { only: 'observe' },
      })
    ).body;
    const list = await member.get(`/policies/${created.id}/versions`);
    expect(list.status).toBe(200);
    expect(list.body.policy_id).toBe(created.id);
    expect(list.body.total).toBe(3);
    const [v2, v1, v0] = list.body.versions;
    expect([v2.operation, v1.operation, v0.operation]).toEqual(['update', 'update', 'create']);
    expect(v2.timestamp >= v1.timestamp && v1.timestamp >= v0.timestamp).toBe(true);
    expect(v0.user_id).toBe('admin');
    expect(v1.diff).toEqual(
      expect.arrayContaining([
        { op: 'replace', path: '/name', old: 'v0', new: 'v1' },
        { op: 'remove', path: '/rules/no_violence', old: 'No violent content' },
        { op: 'add', path: '/rules/only', new: 'one rule' },
      ]),
    );
    for (const [v, state] of [
      [v0, created],
      [v1, s1],
      [v2, s2],
    ] as const) {
      const at = await member.get(`/policies/${created.id}/versions/${v.id}`);
      expect(at.status).toBe(200);
      expect(at.body).toMatchObject({
        id: v.id,
        policy_id: created.id,
        operation: v.operation,
        timestamp: v.timestamp,
        user_id: 'admin',
      });
      expect(at.body.policy_state).toEqual(state);
    }
    expect(
      (await member.get(`/policies/${created.id}/versions/ffffffffffffffffffffffff`)).status,
    ).toBe(404);
  });
});

describe('presets', () => {
  it('are visible to every org and read-only', async () => {
    for (const c of [admin, member, other]) {
      const list = await c.get('/policies');
      const presets = list.body.policies.filter((p: { is_preset: boolean }) => p.is_preset);
      expect(presets.map((p: { name: string }) => p.name).sort()).toEqual([...PRESET_NAMES].sort());
    }
    const preset = (await other.get('/policies')).body.policies.find(
      (p: { name: string }) => p.name === 'Basic Content Safety',
    );
    expect(Object.keys(preset.rules).length).toBeGreaterThan(5);
    expect((await other.get(`/policies/${preset.id}`)).body).toEqual(preset);
    expect((await other.get(`/policies/${preset.id}/export`)).body.name).toBe(
      'Basic Content Safety',
    );
    expect((await other.get(`/policies/${preset.id}/versions`)).body).toEqual({
      policy_id: preset.id,
      versions: [],
      total: 0,
    });
    const put = await admin.put(`/policies/${preset.id}`, { name: 'mine now' });
    expect(put.status).toBe(403);
    expect(put.body.error_code).toBe('PRESET_POLICY_READ_ONLY');
    const del = await admin.del(`/policies/${preset.id}`);
    expect(del.status).toBe(403);
    expect(del.body.error_code).toBe('PRESET_POLICY_READ_ONLY');
    expect((await admin.get(`/policies/${preset.id}`)).body.name).toBe('Basic Content Safety');
  });
});

describe('roles', () => {
  it('members read but every write answers 403 ADMIN_REQUIRED', async () => {
    const p = (await admin.post('/policies', sample())).body;
    expect((await member.get(`/policies/${p.id}`)).status).toBe(200);
    expect((await member.get(`/policies/${p.id}/versions`)).status).toBe(200);
    expect((await member.get('/policies/export')).status).toBe(200);
    const writes = [
      member.post('/policies', sample()),
      member.put(`/policies/${p.id}`, { name: 'x' }),
      member.del(`/policies/${p.id}`),
      member.post('/policies/import', { policy: { name: 'x' } }),
      member.post('/policies/bulk-import', { policies: [{ name: 'x' }] }),
    ];
    for (const res of await Promise.all(writes)) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: true, error_code: 'ADMIN_REQUIRED' });
    }
    expect((await admin.get(`/policies/${p.id}`)).body).toEqual(p);
    // The body is checked first, then the verb checks the role: a member's malformed write is a
    // 422 like anyone's, and reveals nothing.
    expect((await member.post('/policies', { name: '' })).status).toBe(422);
  });
});

describe('org isolation', () => {
  it("another org sees none of this org's policies, versions or exports", async () => {
    const p = (await admin.post('/policies', sample({ name: 'secret policy' }))).body;
    const versionId = (await admin.get(`/policies/${p.id}/versions`)).body.versions[0].id;
    const list = await other.get('/policies');
    expect(list.body.policies.filter((x: { is_preset: boolean }) => !x.is_preset)).toEqual([]);
    expect(list.body.total).toBe(PRESET_NAMES.length);
    const exp = await other.get('/policies/export');
    expect(exp.body.policies.map((x: { name: string }) => x.name)).not.toContain('secret policy');
    for (const res of [
      await other.get(`/policies/${p.id}`),
      await other.get(`/policies/${p.id}/export`),
      await other.get(`/policies/${p.id}/versions`),
      await other.get(`/policies/${p.id}/versions/${versionId}`),
      await other.put(`/policies/${p.id}`, { name: 'stolen' }),
      await other.del(`/policies/${p.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error_code).toBe('NOT_FOUND');
    }
    expect((await admin.get(`/policies/${p.id}`)).body.name).toBe('secret policy');
    const mine = (await other.post('/policies', sample({ name: 'other org policy' }))).body;
    expect((await admin.get(`/policies/${mine.id}`)).status).toBe(404);
  });
});

// Validation bodies, boundary values and scanners_config checks run in process, over createApp
// (services/api/src/routes/policies.test.ts): this file keeps what needs the real server.

describe('authentication', () => {
  it('accepts the key as Bearer, x-api-key or x-goog-api-key', async () => {
    for (const h of ['bearer', 'x-api-key', 'x-goog-api-key'] as const) {
      expect((await client(server.url, server.adminKey, h).get('/policies')).status).toBe(200);
    }
  });

  it('answers 401 UNAUTHORIZED without a key, with a wrong key, or with a revoked key', async () => {
    for (const res of [
      await client(server.url, null).get('/policies'),
      await client(server.url, 'gk_wrong').get('/policies'),
      await client(server.url, server.adminKey.toUpperCase()).get('/policies'),
      await client(server.url, null).call('GET', '/policies', undefined, {
        authorization: 'Basic abc',
      }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: true, error_code: 'UNAUTHORIZED' });
    }
    const org = await makeOrg(server.url, server.adminKey, 'revocation');
    const c = client(server.url, org.memberKey);
    expect((await c.get('/policies')).status).toBe(200);
    // Revoked over HTTP, through the process that authenticates: it applies at once. A deployment
    // of several processes may take up to its auth cache TTL.
    const revoked = await admin.del(`/orgs/${org.orgId}/keys/${org.memberKeyId}`);
    expect(revoked.status).toBe(200);
    expect(await statusOnceRevoked(server.url, org.memberKey, settleWithin(server))).toBe(401);
  });

  // Reads the store file and the logs of the server this suite started: skipped against
  // E2E_BASE_URL.
  it.skipIf(!!process.env.E2E_BASE_URL)('never stores or logs the key', async () => {
    const fs = await import('node:fs');
    const local = server.local!;
    const db = fs.readFileSync(`${local.dataDir}/guard.db`);
    expect(db.includes(Buffer.from(local.adminKey))).toBe(false);
    expect(local.logs.join('\n')).not.toContain(local.adminKey);
  });
});

describe('service endpoints', () => {
  it('serves health, readiness, the OpenAPI document and its docs page', async () => {
    const anon = client(server.url, null);
    expect((await anon.get('/healthz')).body.status).toBe('ok');
    expect((await anon.get('/readyz')).status).toBe(200);
    const doc = await anon.get('/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    for (const p of [
      '/policies',
      '/policies/export',
      '/policies/{policy_id}',
      '/policies/{policy_id}/export',
      '/policies/{policy_id}/versions',
      '/policies/{policy_id}/versions/{version_id}',
      '/policies/import',
      '/policies/bulk-import',
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(p);
    }
    expect(doc.body.components.schemas.PolicyCreateRequest.properties.name).toBeDefined();
    const page = await fetch(`${server.url}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger');
  });

  it('answers unknown routes with 404 NOT_FOUND and carries a request id', async () => {
    const res = await admin.get('/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body.error_code).toBe('NOT_FOUND');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('refuses bodies over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const big = { name: 'big', description: 'x'.repeat(1024 * 1024 + 10) };
    const res = await admin.post('/policies', big);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: true, error_code: 'PAYLOAD_TOO_LARGE' });
  });
});
