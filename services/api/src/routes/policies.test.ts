import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BulkImportResponse,
  DeleteResponse,
  ErrorBody,
  Policy,
  PolicyAtVersion,
  PolicyExportAll,
  PolicyExportItem,
  PolicyList,
  PolicyVersionList,
  ValidationErrorBody,
} from '@guard/contracts';
import { expectShape } from '../testing/expect-shape.js';
import {
  startInProcessApi,
  type ApiClient,
  type InProcessApi,
  type TestOrg,
} from '../testing/in-process.js';

/**
 * The policy endpoints over HTTP, in process over the memory stores. Every answer is also checked
 * by the harness against /openapi.json and its zod schema; the `expectShape` calls here are what
 * give the test typed values to assert on.
 */

const PRESET_NAMES = [
  'Basic Content Safety',
  'Prompt Injection Protection',
  'PII Protection',
  'Coding Agent',
];
const ID = /^[0-9a-f]{24}$/;

let api: InProcessApi;
let admin: ApiClient;
let member: ApiClient;
let other: ApiClient;
let otherOrg: TestOrg;

beforeAll(async () => {
  api = await startInProcessApi();
  admin = api.client(api.adminKey);
  member = api.client((await api.makeKey(api.defaultOrgId, 'member', 'bob')).key);
  otherOrg = await api.makeOrg('other');
  other = api.client(otherOrg.adminKey);
});

afterAll(async () => {
  await api?.close();
});

const sample = (over: Record<string, unknown> = {}) => ({
  name: 'Support bot',
  description: 'Rules for the support assistant',
  categories: { no_violence: 'No violent content', no_pii: 'Do not reveal personal data' },
  rule_modes: { no_pii: 'observe' },
  ...over,
});

async function create(c: ApiClient, body: Record<string, unknown>) {
  const res = await c.post('/policies', body);
  expect(res.status).toBe(201);
  return expectShape(Policy, res.body);
}

const validation = (body: unknown) => expectShape(ValidationErrorBody, body).detail;
const errorCode = (body: unknown) => expectShape(ErrorBody, body).error_code;

describe('create and read', () => {
  it('creates with 201, fills defaults and reads it back', async () => {
    const p = await create(admin, sample());
    expect(p.id).toMatch(ID);
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
    // The harness refuses undeclared fields, but say it where a reader looks for it.
    expect(p).not.toHaveProperty('org_id');
    expect(p).not.toHaveProperty('categories');
    expect(Date.parse(p.created_at)).not.toBeNaN();
    expect(p.updated_at).toBe(p.created_at);
    const got = await member.get(`/policies/${p.id}`);
    expect(got.status).toBe(200);
    expect(expectShape(Policy, got.body)).toEqual(p);
  });

  it('accepts the disabled rule mode and a block message', async () => {
    const p = await create(
      admin,
      sample({ rule_modes: { no_pii: 'disabled' }, block_message: 'Nope.' }),
    );
    expect(p.rule_modes).toEqual({ no_pii: 'disabled' });
    expect(p.block_message).toBe('Nope.');
  });

  it('lists most recently updated first, presets last, with limit/offset/has_more', async () => {
    const org = await api.makeOrg('listing');
    const c = api.client(org.adminKey);
    const m = api.client(org.memberKey);
    const a = await create(c, sample({ name: 'list-a' }));
    const b = await create(c, sample({ name: 'list-b' }));
    await c.put(`/policies/${a.id}`, { description: 'touched' });
    const all = expectShape(PolicyList, (await m.get('/policies')).body);
    expect(all).toMatchObject({ limit: null, offset: 0, has_more: false, total: 2 + 4 });
    expect(all.policies.map((p) => p.name)).toEqual(['list-a', 'list-b', ...PRESET_NAMES]);
    expect(all.policies.slice(-4).every((p) => p.is_preset)).toBe(true);

    const page = expectShape(PolicyList, (await m.get('/policies?limit=1&offset=1')).body);
    expect(page).toMatchObject({ total: all.total, limit: 1, offset: 1, has_more: true });
    expect(page.policies.map((p) => p.id)).toEqual([b.id]);
    const last = expectShape(
      PolicyList,
      (await m.get(`/policies?limit=1000&offset=${all.total - 1}`)).body,
    );
    expect(last.policies.map((p) => p.name)).toEqual([PRESET_NAMES.at(-1)]);
    expect(last.has_more).toBe(false);
    const beyond = expectShape(
      PolicyList,
      (await m.get(`/policies?limit=5&offset=${all.total + 3}`)).body,
    );
    expect(beyond.policies).toEqual([]);
    expect(beyond.has_more).toBe(false);
  });
});

describe('update and delete', () => {
  it('changes only the provided fields and drops modes of removed rules', async () => {
    const p = await create(admin, sample({ pre_jb_threshold: 0.2 }));
    const res = await admin.put(`/policies/${p.id}`, { description: 'new description' });
    expect(res.status).toBe(200);
    const updated = expectShape(Policy, res.body);
    expect(updated).toEqual({
      ...p,
      description: 'new description',
      updated_at: updated.updated_at,
    });
    expect(updated.updated_at >= p.updated_at).toBe(true);

    const res2 = expectShape(
      Policy,
      (await admin.put(`/policies/${p.id}`, { categories: { no_violence: 'No violence at all' } }))
        .body,
    );
    expect(res2.rules).toEqual({ no_violence: 'No violence at all' });
    expect(res2.rule_modes).toEqual({});
    expect(res2.pre_jb_threshold).toBe(0.2);
  });

  it('rejects rule_modes for rules the updated policy does not have, changing nothing', async () => {
    const p = await create(admin, sample());
    const res = await admin.put(`/policies/${p.id}`, { rule_modes: { ghost: 'block' } });
    expect(res.status).toBe(422);
    expect(validation(res.body)[0]?.loc).toEqual(['body', 'rule_modes', 'ghost']);
    expect((await admin.get(`/policies/${p.id}`)).body).toEqual(p);
    expect(
      expectShape(PolicyVersionList, (await admin.get(`/policies/${p.id}/versions`)).body).total,
    ).toBe(1);
  });

  it('deletes with {id, deleted}, then the policy is gone but its versions remain', async () => {
    const p = await create(admin, sample({ name: 'to delete' }));
    const del = await admin.del(`/policies/${p.id}`);
    expect(del.status).toBe(200);
    expect(expectShape(DeleteResponse, del.body)).toEqual({ id: p.id, deleted: true });
    expect((await admin.get(`/policies/${p.id}`)).status).toBe(404);
    expect((await admin.del(`/policies/${p.id}`)).status).toBe(404);
    expect((await admin.put(`/policies/${p.id}`, { name: 'x' })).status).toBe(404);
    const versions = expectShape(
      PolicyVersionList,
      (await admin.get(`/policies/${p.id}/versions`)).body,
    );
    expect(versions.versions.map((v) => v.operation)).toEqual(['delete', 'create']);
    const atDelete = expectShape(
      PolicyAtVersion,
      (await admin.get(`/policies/${p.id}/versions/${versions.versions[0]!.id}`)).body,
    );
    expect(atDelete.policy_state.name).toBe('to delete');
    const list = expectShape(PolicyList, (await admin.get('/policies')).body);
    expect(list.policies.some((x) => x.id === p.id)).toBe(false);
  });

  it('answers 404 with the standard body for unknown ids', async () => {
    const res = await admin.get('/policies/ffffffffffffffffffffffff');
    expect(res.status).toBe(404);
    expect(errorCode(res.body)).toBe('NOT_FOUND');
    expect((await admin.get('/policies/not-an-id/versions')).status).toBe(404);
    expect((await admin.get('/policies/not-an-id/export')).status).toBe(404);
    expect((await admin.get('/policies/not-an-id/versions/x')).status).toBe(404);
  });
});

describe('export and import', () => {
  it('exports one policy and all policies with export_version 1.0', async () => {
    const p = await create(
      admin,
      sample({ name: 'exported', scanners_config: { pii: { enabled: true } } }),
    );
    const one = await member.get(`/policies/${p.id}/export`);
    expect(one.status).toBe(200);
    expect(expectShape(PolicyExportItem, one.body)).toEqual({
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
    const all = expectShape(PolicyExportAll, (await member.get('/policies/export')).body);
    expect(Date.parse(all.export_date)).not.toBeNaN();
    expect(all.total).toBe(all.policies.length);
    expect(all.total).toBe(expectShape(PolicyList, (await member.get('/policies')).body).total);
    expect(all.policies.some((x) => x.name === 'exported')).toBe(true);
  });

  it('imports an export round-trip with a new id, ignoring ids in the payload', async () => {
    const p = await create(admin, sample({ name: 'round trip' }));
    const exported = expectShape(
      PolicyExportItem,
      (await admin.get(`/policies/${p.id}/export`)).body,
    );
    const res = await admin.post('/policies/import', {
      policy: { ...exported, id: p.id, _id: 'x', policy_id: 'y' },
    });
    expect(res.status).toBe(200);
    const imported = expectShape(Policy, res.body);
    expect(imported.id).not.toBe(p.id);
    expect(imported.rules).toEqual(p.rules);
    expect(imported.rule_modes).toEqual(p.rule_modes);
    const versions = expectShape(
      PolicyVersionList,
      (await admin.get(`/policies/${imported.id}/versions`)).body,
    );
    expect(versions.versions[0]?.operation).toBe('import');
    const noName = await admin.post('/policies/import', { policy: { description: 'no name' } });
    expect(noName.status).toBe(422);
    expect(validation(noName.body)[0]?.loc).toEqual(['body', 'policy', 'name']);
    const missing = await admin.post('/policies/import', {});
    expect(validation(missing.body)[0]?.loc).toEqual(['body', 'policy']);
    const unknown = await admin.post('/policies/import', { policy: { name: 'x', colour: 'red' } });
    expect(unknown.status).toBe(422);
    expect(validation(unknown.body)[0]?.msg).toContain('colour');
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
    const bulk = expectShape(BulkImportResponse, res.body);
    expect(bulk).toMatchObject({ total: 6, successful: 2, failed: 4 });
    const r = bulk.results;
    expect(r.map((x) => x.success)).toEqual([true, false, false, false, false, true]);
    expect(r[0]?.id).toMatch(ID);
    expect(r[1]?.error).toMatch(/name/);
    expect(r[2]).toMatchObject({ name: 'bulk-bad-mode', id: null });
    expect(r[3]?.error).toMatch(/rule_modes/);
    expect(r[4]).toMatchObject({ name: null, success: false, id: null });
    const created = expectShape(Policy, (await admin.get(`/policies/${r[5]?.id}`)).body);
    expect(created.pre_violation_threshold).toBe(0.7);
    const versions = expectShape(
      PolicyVersionList,
      (await admin.get(`/policies/${r[0]?.id}/versions`)).body,
    );
    expect(versions.versions[0]?.operation).toBe('bulk_import');
  });

  it('rejects an empty, oversized or non-array bulk import', async () => {
    expect((await admin.post('/policies/bulk-import', { policies: [] })).status).toBe(422);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ name: `p${i}` }));
    const res = await admin.post('/policies/bulk-import', { policies: tooMany });
    expect(res.status).toBe(422);
    expect(validation(res.body)[0]?.loc).toEqual(['body', 'policies']);
    expect((await admin.post('/policies/bulk-import', { policies: 'x' })).status).toBe(422);
  });

  it('reports an oversized scanners_config in bulk import on its own item', async () => {
    const res = await admin.post('/policies/bulk-import', {
      policies: [
        { name: 'bulk-good' },
        {
          name: 'bulk-huge',
          scanners_config: { keywords: Array.from({ length: 9_000 }, (_, i) => `word${i}`) },
        },
      ],
    });
    const bulk = expectShape(BulkImportResponse, res.body);
    expect(bulk).toMatchObject({ total: 2, successful: 1, failed: 1 });
    expect(bulk.results[1]).toMatchObject({ name: 'bulk-huge', success: false, id: null });
    expect(bulk.results[1]?.error).toContain('scanners_config must be at most 65536 bytes');
  });
});

describe('versions', () => {
  it('lists versions newest first and reads any version back as the full state', async () => {
    const created = await create(admin, sample({ name: 'v0' }));
    const s1 = expectShape(
      Policy,
      (await admin.put(`/policies/${created.id}`, { name: 'v1', categories: { only: 'one rule' } }))
        .body,
    );
    const s2 = expectShape(
      Policy,
      (
        await admin.put(`/policies/${created.id}`, {
          pre_violation_threshold: 0.9,
          rule_modes: { only: 'observe' },
        })
      ).body,
    );
    const list = expectShape(
      PolicyVersionList,
      (await admin.get(`/policies/${created.id}/versions`)).body,
    );
    expect(list.policy_id).toBe(created.id);
    expect(list.total).toBe(3);
    const [v2, v1, v0] = list.versions;
    expect([v2?.operation, v1?.operation, v0?.operation]).toEqual(['update', 'update', 'create']);
    expect(v0?.user_id).toBe('admin');
    expect(v1?.diff).toEqual(
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
      const at = expectShape(
        PolicyAtVersion,
        (await admin.get(`/policies/${created.id}/versions/${v?.id}`)).body,
      );
      expect(at).toMatchObject({
        id: v?.id,
        policy_id: created.id,
        operation: v?.operation,
        timestamp: v?.timestamp,
        user_id: 'admin',
      });
      expect(at.policy_state).toEqual(state);
    }
    const unknown = await admin.get(`/policies/${created.id}/versions/ffffffffffffffffffffffff`);
    expect(unknown.status).toBe(404);
  });

  it('records `rules` (the alias of `categories`) like categories, on create, update and import', async () => {
    const created = await create(admin, { name: 'alias', rules: { no_spam: 'No spam' } });
    expect(created.rules).toEqual({ no_spam: 'No spam' });
    const updated = expectShape(
      Policy,
      (
        await admin.put(`/policies/${created.id}`, {
          rules: { no_spam: 'No spam', no_ads: 'No ads' },
        })
      ).body,
    );
    expect(updated.rules).toEqual({ no_spam: 'No spam', no_ads: 'No ads' });
    const versions = expectShape(
      PolicyVersionList,
      (await admin.get(`/policies/${created.id}/versions`)).body,
    );
    expect(versions.versions[0]?.diff).toEqual([
      { op: 'add', path: '/rules/no_ads', new: 'No ads' },
    ]);
    const imported = expectShape(
      Policy,
      (
        await admin.post('/policies/import', {
          policy: { name: 'alias import', rules: { a: 'x' } },
        })
      ).body,
    );
    expect(imported.rules).toEqual({ a: 'x' });
  });

  it('keeps rules named like inherited properties or JSON pointer syntax, with a true history', async () => {
    const p = await create(admin, {
      name: 'inherited',
      categories: { r1: 'No spam', constructor: 'No ads', 'a/b': 'slash', '~1': 'tilde' },
    });
    const modes = await admin.put(`/policies/${p.id}`, { rule_modes: { constructor: 'observe' } });
    expect(modes.status).toBe(200);
    const removed = expectShape(
      Policy,
      (await admin.put(`/policies/${p.id}`, { categories: { r1: 'No spam' } })).body,
    );
    expect(removed.rules).toEqual({ r1: 'No spam' });
    expect(removed.rule_modes).toEqual({});
    const added = expectShape(
      Policy,
      (
        await admin.put(`/policies/${p.id}`, {
          categories: { r1: 'No spam', toString: 'No spam either' },
        })
      ).body,
    );
    expect(added.rules).toEqual({ r1: 'No spam', toString: 'No spam either' });
    const versions = expectShape(
      PolicyVersionList,
      (await admin.get(`/policies/${p.id}/versions`)).body,
    ).versions;
    expect(versions[0]?.diff).toEqual([
      { op: 'add', path: '/rules/toString', new: 'No spam either' },
    ]);
    const states: Record<string, string>[] = [];
    for (const v of versions) {
      const at = await admin.get(`/policies/${p.id}/versions/${v.id}`);
      states.push(expectShape(PolicyAtVersion, at.body).policy_state.rules);
    }
    const first: Record<string, string> = {
      r1: 'No spam',
      constructor: 'No ads',
      'a/b': 'slash',
      '~1': 'tilde',
    };
    const expected: Record<string, string>[] = [
      { r1: 'No spam', toString: 'No spam either' },
      { r1: 'No spam' },
      first,
      first,
    ];
    expect(states).toEqual(expected);
    const bad = await admin.post('/policies', {
      name: 'x',
      categories: { a: 'b' },
      rule_modes: { hasOwnProperty: 'observe' },
    });
    expect(bad.status).toBe(422);
  });
});

describe('presets', () => {
  it('are visible to every org and read-only', async () => {
    for (const c of [admin, member, other]) {
      const list = expectShape(PolicyList, (await c.get('/policies')).body);
      expect(list.policies.filter((p) => p.is_preset).map((p) => p.name)).toEqual(PRESET_NAMES);
    }
    const list = expectShape(PolicyList, (await other.get('/policies')).body);
    const preset = list.policies.find((p) => p.name === 'Basic Content Safety')!;
    expect(Object.keys(preset.rules).length).toBeGreaterThan(5);
    expect((await other.get(`/policies/${preset.id}`)).body).toEqual(preset);
    const exported = expectShape(
      PolicyExportItem,
      (await other.get(`/policies/${preset.id}/export`)).body,
    );
    expect(exported.name).toBe('Basic Content Safety');
    expect((await other.get(`/policies/${preset.id}/versions`)).body).toEqual({
      policy_id: preset.id,
      versions: [],
      total: 0,
    });
    for (const res of [
      await admin.put(`/policies/${preset.id}`, { name: 'mine now' }),
      await admin.del(`/policies/${preset.id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(errorCode(res.body)).toBe('PRESET_POLICY_READ_ONLY');
    }
    expect(expectShape(Policy, (await admin.get(`/policies/${preset.id}`)).body).name).toBe(
      'Basic Content Safety',
    );
  });
});

describe('roles', () => {
  it('members read but every write answers 403 ADMIN_REQUIRED', async () => {
    const p = await create(admin, sample());
    expect((await member.get(`/policies/${p.id}`)).status).toBe(200);
    expect((await member.get(`/policies/${p.id}/versions`)).status).toBe(200);
    expect((await member.get('/policies/export')).status).toBe(200);
    const writes: [string, Promise<{ status: number; body: unknown }>][] = [
      ['create', member.post('/policies', sample())],
      ['update', member.put(`/policies/${p.id}`, { name: 'x' })],
      ['delete', member.del(`/policies/${p.id}`)],
      ['import', member.post('/policies/import', { policy: { name: 'x' } })],
      ['bulk import', member.post('/policies/bulk-import', { policies: [{ name: 'x' }] })],
    ];
    for (const [what, call] of writes) {
      const res = await call;
      expect(res.status, what).toBe(403);
      expect(errorCode(res.body), what).toBe('ADMIN_REQUIRED');
    }
    expect((await admin.get(`/policies/${p.id}`)).body).toEqual(p);
  });
});

describe('org isolation', () => {
  it("another org sees none of this org's policies, versions or exports", async () => {
    const p = await create(admin, sample({ name: 'secret policy' }));
    const versionId = expectShape(
      PolicyVersionList,
      (await admin.get(`/policies/${p.id}/versions`)).body,
    ).versions[0]!.id;
    const list = expectShape(PolicyList, (await other.get('/policies')).body);
    expect(list.policies.filter((x) => !x.is_preset)).toEqual([]);
    expect(list.total).toBe(PRESET_NAMES.length);
    const exp = expectShape(PolicyExportAll, (await other.get('/policies/export')).body);
    expect(exp.policies.map((x) => x.name)).not.toContain('secret policy');
    for (const res of [
      await other.get(`/policies/${p.id}`),
      await other.get(`/policies/${p.id}/export`),
      await other.get(`/policies/${p.id}/versions`),
      await other.get(`/policies/${p.id}/versions/${versionId}`),
      await other.put(`/policies/${p.id}`, { name: 'stolen' }),
      await other.del(`/policies/${p.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(errorCode(res.body)).toBe('NOT_FOUND');
    }
    expect(expectShape(Policy, (await admin.get(`/policies/${p.id}`)).body).name).toBe(
      'secret policy',
    );
    const mine = await create(other, sample({ name: 'other org policy' }));
    expect((await admin.get(`/policies/${mine.id}`)).status).toBe(404);
  });

  it('an org made over HTTP by staff is isolated the same way', async () => {
    const org = await admin.post('/orgs', { name: 'via-http' });
    expect(org.status).toBe(201);
    const orgId = (org.body as { id: string }).id;
    const key = await admin.post(`/orgs/${orgId}/keys`, { role: 'admin' });
    const c = api.client((key.body as { key: string }).key);
    const mine = await create(c, { name: 'http org policy' });
    expect((await admin.get(`/policies/${mine.id}`)).status).toBe(404);
    const list = expectShape(PolicyList, (await c.get('/policies')).body);
    expect(list.policies.map((x) => x.name)).toEqual(['http org policy', ...PRESET_NAMES]);
  });
});

describe('validation', () => {
  const cases: [string, () => Promise<{ status: number; body: unknown }>, (string | number)[]][] = [
    ['limit 0', () => admin.get('/policies?limit=0'), ['query', 'limit']],
    ['limit 1001', () => admin.get('/policies?limit=1001'), ['query', 'limit']],
    ['limit not a number', () => admin.get('/policies?limit=ten'), ['query', 'limit']],
    ['negative offset', () => admin.get('/policies?offset=-1'), ['query', 'offset']],
    [
      'unknown rule mode',
      () => admin.post('/policies', sample({ rule_modes: { no_pii: 'shadow' } })),
      ['body', 'rule_modes', 'no_pii'],
    ],
    [
      'rule_modes key without rule',
      () => admin.post('/policies', sample({ rule_modes: { nope: 'block' } })),
      ['body', 'rule_modes', 'nope'],
    ],
    [
      'threshold above 1',
      () => admin.post('/policies', sample({ pre_violation_threshold: 1.5 })),
      ['body', 'pre_violation_threshold'],
    ],
    [
      'threshold below 0',
      () => admin.post('/policies', sample({ post_violation_jb_threshold: -0.1 })),
      ['body', 'post_violation_jb_threshold'],
    ],
    [
      'name over 255 chars',
      () => admin.post('/policies', sample({ name: 'x'.repeat(256) })),
      ['body', 'name'],
    ],
    ['missing name', () => admin.post('/policies', { description: 'x' }), ['body', 'name']],
    [
      'name of the wrong type',
      () => admin.post('/policies', sample({ name: 42 })),
      ['body', 'name'],
    ],
    [
      'categories not an object',
      () => admin.post('/policies', sample({ categories: 'violence' })),
      ['body', 'categories'],
    ],
    ['unknown mode', () => admin.post('/policies', sample({ mode: 'vibes' })), ['body', 'mode']],
    [
      'block message over 2000 chars',
      () => admin.post('/policies', sample({ block_message: 'x'.repeat(2001) })),
      ['body', 'block_message'],
    ],
    [
      'update with a bad threshold',
      () => admin.put('/policies/ffffffffffffffffffffffff', { pre_jb_threshold: 'high' }),
      ['body', 'pre_jb_threshold'],
    ],
    ['no body', () => admin.post('/policies'), ['body']],
    [
      'both rule spellings',
      () => admin.post('/policies', { name: 'x', rules: { a: 'b' }, categories: { a: 'b' } }),
      ['body', 'rules'],
    ],
    [
      'an unknown field',
      () => admin.post('/policies', { name: 'x', rulez: {} }),
      ['body', 'rulez'],
    ],
    [
      'an unknown field on update',
      () => admin.put('/policies/ffffffffffffffffffffffff', { treshold: 0.4 }),
      ['body', 'treshold'],
    ],
    [
      'an empty rule name',
      () => admin.post('/policies', { name: 'x', categories: { '': 'No spam' } }),
      ['body', 'categories', ''],
    ],
    [
      'an unknown PII type',
      () =>
        admin.post(
          '/policies',
          sample({ scanners_config: { pii: { enabled: true, pii_types: ['shoe_size'] } } }),
        ),
      ['body', 'scanners_config', 'pii'],
    ],
  ];
  for (const [name, call, loc] of cases) {
    it(`answers 422 with loc/msg/type for ${name}`, async () => {
      const res = await call();
      expect(res.status).toBe(422);
      const [issue] = validation(res.body);
      expect(issue?.loc).toEqual(loc);
    });
  }

  it('says what was wrong in words a caller can act on', async () => {
    expect(validation((await admin.post('/policies', { name: 5 })).body)).toEqual([
      { loc: ['body', 'name'], msg: 'expected string, got number', type: 'string_type' },
    ]);
    expect(validation((await admin.post('/policies', {})).body)).toEqual([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
    ]);
    expect(
      validation((await admin.post('/policies', { name: 'x', rulez: { a: 'b' } })).body),
    ).toEqual([{ loc: ['body', 'rulez'], msg: 'unknown field "rulez"', type: 'extra_forbidden' }]);
    expect(validation((await admin.get('/policies?limit=abc')).body)[0]).toMatchObject({
      loc: ['query', 'limit'],
      msg: 'expected a whole number, got "abc"',
    });
    expect(validation((await admin.get('/policies?limit=5000')).body)[0]).toMatchObject({
      msg: 'must be at most 1000',
    });
    expect(
      validation(
        (await admin.post('/policies', { name: 'x', categories: { '': 'No spam' } })).body,
      )[0]?.msg,
    ).toBe('invalid name "": names must be at least 1 character long');
    const long = await admin.post('/policies', {
      name: 'x',
      categories: { ['n'.repeat(256)]: 'No spam' },
    });
    expect(validation(long.body)[0]?.msg).toContain('names must be at most 255 characters long');
  });

  it('refuses an unsafe regex in scanners_config with a located 422', async () => {
    const res = await admin.post('/policies', sample({ scanners_config: { regex: ['(?<=x)y'] } }));
    expect(res.status).toBe(422);
    expect(validation(res.body)[0]?.loc.slice(0, 3)).toEqual(['body', 'scanners_config', 'regex']);
  });

  it('takes the encoder stage setting, and refuses an unknown one with a located 422', async () => {
    const ok = await admin.post('/policies', sample({ scanners_config: { encoder: 'all' } }));
    expect(ok.status).toBe(201);
    expect(expectShape(Policy, ok.body).scanners_config).toEqual({ encoder: 'all' });
    const res = await admin.post('/policies', sample({ scanners_config: { encoder: 'always' } }));
    expect(res.status).toBe(422);
    expect(validation(res.body)[0]?.loc.slice(0, 3)).toEqual([
      'body',
      'scanners_config',
      'encoder',
    ]);
  });

  it('an invalid update records no version', async () => {
    const p = await create(admin, { name: 'strict update' });
    expect((await admin.put(`/policies/${p.id}`, { treshold: 0.4 })).status).toBe(422);
    expect((await admin.put(`/policies/${p.id}`, { name: '' })).status).toBe(422);
    const versions = await admin.get(`/policies/${p.id}/versions`);
    expect(expectShape(PolicyVersionList, versions.body).total).toBe(1);
  });

  it('accepts the boundary values', async () => {
    expect((await admin.get('/policies?limit=1')).status).toBe(200);
    expect((await admin.get('/policies?limit=1000&offset=0')).status).toBe(200);
    const p = await create(
      admin,
      sample({ name: 'x'.repeat(255), pre_violation_threshold: 0, post_violation_threshold: 1 }),
    );
    expect(p.name).toHaveLength(255);
  });
});

describe('scanners_config', () => {
  it('accepts the documented scanner forms and stores them as sent', async () => {
    const scanners_config = {
      pii: { enabled: true, pii_types: ['email', 'iban'], redact: true },
      secrets: true,
      keywords: ['acme-internal'],
      regex: { patterns: ['order-\\d{6}'] },
      system_prompt: 'You are a helpful assistant.',
    };
    const p = await create(admin, sample({ scanners_config }));
    expect(p.scanners_config).toEqual(scanners_config);
  });
});
