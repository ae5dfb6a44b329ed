import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  client,
  eventually,
  settleWithin,
  targetServer,
  type Client,
  type TargetServer,
} from './support/guard-server.js';
import { statusOnceRevoked } from './support/orgs-http.js';

/**
 * Organizations and keys over HTTP only: everything here starts from the one staff key the
 * server bootstraps, as a deployment without a local data directory (and so without the CLI)
 * must. No CLI, no store reads.
 */

const ID = /^[0-9a-f]{24}$/;
const PRESET_BASIC = '000000000000000000000001';

let server: TargetServer;
let staff: Client;
let anon: Client;

beforeAll(async () => {
  // No auth cache: a revoked key answers 401 on the next request, without sleeping.
  server = await targetServer({ env: { GUARD_AUTH_CACHE_TTL_MS: '0' } });
  staff = client(server.url, server.adminKey);
  anon = client(server.url, null);
});

afterAll(async () => {
  await server?.stop();
});

interface OrgBody {
  id: string;
  name: string;
  kind: string;
  default_policy_id: string | null;
  created_at: string;
}
interface KeyBody {
  id: string;
  key: string;
  prefix: string;
  org_id: string;
  user_id: string;
  role: string;
  staff: boolean;
  name: string;
  created_at: string;
  revoked_at: string | null;
}

/** An org made by staff, with an admin key made by staff for it. */
async function orgWithAdmin(name: string) {
  const org = await staff.post<OrgBody>('/orgs', { name });
  expect(org.status).toBe(201);
  const key = await staff.post<KeyBody>(`/orgs/${org.body.id}/keys`, {
    role: 'admin',
    user_id: `${name}-admin`,
  });
  expect(key.status).toBe(201);
  return { org: org.body, adminKey: key.body, admin: client(server.url, key.body.key) };
}

describe('the bootstrap key', () => {
  it('is a staff admin key of the default org', async () => {
    const list = await staff.get<{ orgs: OrgBody[] }>('/orgs');
    expect(list.status).toBe(200);
    const def = list.body.orgs.find((o) => o.name === 'default')!;
    expect(def).toBeDefined();
    const keys = await staff.get<{ keys: KeyBody[] }>(`/orgs/${def.id}/keys`);
    expect(keys.status).toBe(200);
    // Other tests add keys to the default org of a shared server: find this one by its prefix.
    const mine = keys.body.keys.filter((k) => server.adminKey.startsWith(k.prefix));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      role: 'admin',
      staff: true,
      user_id: 'admin',
      revoked_at: null,
    });
  });
});

describe('staff manage organizations', () => {
  it('creates an org (201), reads it and lists it', async () => {
    const res = await staff.post<OrgBody>('/orgs', { name: 'acme', kind: 'red_team' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'acme',
      kind: 'red_team',
      default_policy_id: null,
      created_at: expect.any(String),
    });
    expect(Date.parse(res.body.created_at)).not.toBeNaN();

    const got = await staff.get<OrgBody>(`/orgs/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    const list = await staff.get<{ orgs: OrgBody[] }>('/orgs');
    expect(list.body.orgs).toContainEqual(res.body);
    // Oldest first: the default org made at first start leads.
    expect(list.body.orgs[0]!.name).toBe('default');
  });

  it('defaults kind to standard', async () => {
    const res = await staff.post<OrgBody>('/orgs', { name: 'plain' });
    expect(res.status).toBe(201);
    expect(res.body.kind).toBe('standard');
  });

  it('answers 404 for an org that does not exist', async () => {
    const res = await staff.get('/orgs/000000000000000000000000');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: true, error_code: 'NOT_FOUND' });
    const keys = await staff.get('/orgs/000000000000000000000000/keys');
    expect(keys.status).toBe(404);
    const create = await staff.post('/orgs/000000000000000000000000/keys', {});
    expect(create.status).toBe(404);
  });

  it('needs a key', async () => {
    expect((await anon.get('/orgs')).status).toBe(401);
    expect((await anon.post('/orgs', { name: 'x' })).status).toBe(401);
  });
});

describe('org admins manage their keys', () => {
  let a: Awaited<ReturnType<typeof orgWithAdmin>>;
  let member: KeyBody;

  beforeAll(async () => {
    a = await orgWithAdmin('org-a');
  });

  it('staff made an admin key for the new org, shown with the key once', () => {
    expect(a.adminKey).toEqual({
      id: expect.stringMatching(ID),
      key: expect.stringMatching(/^gk_[A-Za-z0-9]{40}$/),
      prefix: a.adminKey.key.slice(0, 10),
      org_id: a.org.id,
      user_id: 'org-a-admin',
      role: 'admin',
      staff: false,
      name: '',
      created_at: expect.any(String),
      revoked_at: null,
    });
    expect(a.adminKey).not.toHaveProperty('key_hash');
  });

  it('the admin reads its own org but not the org list', async () => {
    const got = await a.admin.get<OrgBody>(`/orgs/${a.org.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(a.org);
    const list = await a.admin.get('/orgs');
    expect(list.status).toBe(403);
    expect(list.body).toMatchObject({ error: true, error_code: 'STAFF_REQUIRED' });
  });

  it('the admin creates a member key (defaults: member, its own user id)', async () => {
    const res = await a.admin.post<KeyBody>(`/orgs/${a.org.id}/keys`, {
      user_id: 'alice',
      name: 'alice laptop',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      org_id: a.org.id,
      user_id: 'alice',
      role: 'member',
      staff: false,
      name: 'alice laptop',
      revoked_at: null,
    });
    member = res.body;

    const defaults = await a.admin.post<KeyBody>(`/orgs/${a.org.id}/keys`, {});
    expect(defaults.status).toBe(201);
    expect(defaults.body).toMatchObject({ user_id: 'org-a-admin', role: 'member', name: '' });
  });

  it('the new key works on /policies and on its own org', async () => {
    const m = client(server.url, member.key);
    const res = await m.get<{ policies: unknown[] }>('/policies');
    expect(res.status).toBe(200);
    expect(res.body.policies.length).toBeGreaterThanOrEqual(4);
    expect((await m.get(`/orgs/${a.org.id}`)).status).toBe(200);
  });

  it('lists the keys without the keys or their hashes', async () => {
    const res = await a.admin.get<{ keys: Record<string, unknown>[] }>(`/orgs/${a.org.id}/keys`);
    expect(res.status).toBe(200);
    const ids = res.body.keys.map((k) => k.id);
    expect(ids).toContain(a.adminKey.id);
    expect(ids).toContain(member.id);
    for (const k of res.body.keys) {
      expect(k).not.toHaveProperty('key');
      expect(k).not.toHaveProperty('key_hash');
      expect(Object.keys(k).sort()).toEqual(
        [
          'created_at',
          'id',
          'name',
          'org_id',
          'prefix',
          'revoked_at',
          'role',
          'staff',
          'user_id',
        ].sort(),
      );
    }
    const listed = res.body.keys.find((k) => k.id === member.id)!;
    const { key: _key, ...shown } = member;
    expect(listed).toEqual(shown);
  });

  it('a member key gets 403 ADMIN_REQUIRED on key management', async () => {
    const m = client(server.url, member.key);
    for (const res of [
      await m.get(`/orgs/${a.org.id}/keys`),
      await m.post(`/orgs/${a.org.id}/keys`, { role: 'admin' }),
      await m.del(`/orgs/${a.org.id}/keys/${a.adminKey.id}`),
      await m.put(`/orgs/${a.org.id}/default-policy`, { policy_id: null }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: true, error_code: 'ADMIN_REQUIRED' });
    }
  });

  it('a non-staff admin cannot create a staff key; staff can', async () => {
    const res = await a.admin.post(`/orgs/${a.org.id}/keys`, { role: 'admin', staff: true });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: true, error_code: 'STAFF_REQUIRED' });
    const fromStaff = await staff.post<KeyBody>(`/orgs/${a.org.id}/keys`, {
      role: 'member',
      staff: true,
      user_id: 'operator',
    });
    expect(fromStaff.status).toBe(201);
    expect(fromStaff.body).toMatchObject({ staff: true, role: 'member', org_id: a.org.id });
    // The new staff key acts across orgs.
    const list = await client(server.url, fromStaff.body.key).get('/orgs');
    expect(list.status).toBe(200);
  });

  it('revoking a key makes it answer 401, and shows in the list', async () => {
    const res = await a.admin.post<KeyBody>(`/orgs/${a.org.id}/keys`, { user_id: 'bob' });
    const bob = client(server.url, res.body.key);
    expect((await bob.get('/policies')).status).toBe(200);

    const revoked = await a.admin.del(`/orgs/${a.org.id}/keys/${res.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ id: res.body.id, revoked: true });

    expect(await statusOnceRevoked(server.url, res.body.key, settleWithin(server))).toBe(401);
    const after = await bob.get('/policies');
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ error: true, error_code: 'UNAUTHORIZED' });

    const keys = await a.admin.get<{ keys: KeyBody[] }>(`/orgs/${a.org.id}/keys`);
    const listed = keys.body.keys.find((k) => k.id === res.body.id)!;
    expect(Date.parse(listed.revoked_at!)).not.toBeNaN();

    // Revoking again is harmless and keeps the first revocation time.
    const again = await a.admin.del(`/orgs/${a.org.id}/keys/${res.body.id}`);
    expect(again.status).toBe(200);
    const keys2 = await a.admin.get<{ keys: KeyBody[] }>(`/orgs/${a.org.id}/keys`);
    expect(keys2.body.keys.find((k) => k.id === res.body.id)!.revoked_at).toBe(listed.revoked_at);
  });

  it('staff revoke keys of any org', async () => {
    const res = await a.admin.post<KeyBody>(`/orgs/${a.org.id}/keys`, { user_id: 'carol' });
    const revoked = await staff.del(`/orgs/${a.org.id}/keys/${res.body.id}`);
    expect(revoked.status).toBe(200);
    expect(await statusOnceRevoked(server.url, res.body.key, settleWithin(server))).toBe(401);
  });

  it('an unknown key id answers 404', async () => {
    const res = await a.admin.del(`/orgs/${a.org.id}/keys/000000000000000000000000`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: true, error_code: 'NOT_FOUND' });
  });
});

describe('organizations are isolated', () => {
  let a: Awaited<ReturnType<typeof orgWithAdmin>>;
  let b: Awaited<ReturnType<typeof orgWithAdmin>>;

  beforeAll(async () => {
    a = await orgWithAdmin('iso-a');
    b = await orgWithAdmin('iso-b');
  });

  it("an admin of org A cannot see, create or revoke org B's keys (404)", async () => {
    const cases = [
      await a.admin.get(`/orgs/${b.org.id}`),
      await a.admin.get(`/orgs/${b.org.id}/keys`),
      await a.admin.post(`/orgs/${b.org.id}/keys`, { role: 'admin' }),
      await a.admin.del(`/orgs/${b.org.id}/keys/${b.adminKey.id}`),
      await a.admin.put(`/orgs/${b.org.id}/default-policy`, { policy_id: null }),
      // A key of org B named under org A's path is not found either.
      await a.admin.del(`/orgs/${a.org.id}/keys/${b.adminKey.id}`),
    ];
    for (const res of cases) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: true, error_code: 'NOT_FOUND' });
    }
    // B's admin key still works.
    expect((await b.admin.get('/policies')).status).toBe(200);
  });

  it('an admin of an org cannot create orgs (403 STAFF_REQUIRED)', async () => {
    const res = await a.admin.post('/orgs', { name: 'mine' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: true, error_code: 'STAFF_REQUIRED' });
    // Refused before validation: a bad body does not change the answer.
    const bad = await a.admin.post('/orgs', { nope: 1 });
    expect(bad.status).toBe(403);
  });
});

describe('default policy', () => {
  let a: Awaited<ReturnType<typeof orgWithAdmin>>;
  let b: Awaited<ReturnType<typeof orgWithAdmin>>;
  let policyA: string;
  let policyB: string;

  beforeAll(async () => {
    a = await orgWithAdmin('dp-a');
    b = await orgWithAdmin('dp-b');
    const pa = await a.admin.post<{ id: string }>('/policies', {
      name: 'A codenames',
      categories: { codenames: 'Never mention the codename "Project Falcon".' },
    });
    expect(pa.status).toBe(201);
    policyA = pa.body.id;
    const pb = await b.admin.post<{ id: string }>('/policies', { name: 'B policy' });
    policyB = pb.body.id;
  });

  const monitor = (c: Client) =>
    c.post<{ policy_id: string }>('/guard/monitor', {
      text: 'What is the status of Project Falcon?',
    });
  // What org A's admin reads back once a change has reached every process of the server (at once
  // with one process: see settleWithin).
  const orgA = (want: string | null) =>
    eventually(
      () => a.admin.get<OrgBody>(`/orgs/${a.org.id}`),
      (r) => r.body.default_policy_id === want,
      settleWithin(server),
    );
  const monitorA = (want: string) =>
    eventually(
      () => monitor(a.admin),
      (r) => r.body.policy_id === want,
      settleWithin(server),
    );

  it('an admin sets its own policy as default; monitor applies it', async () => {
    const res = await a.admin.put<OrgBody>(`/orgs/${a.org.id}/default-policy`, {
      policy_id: policyA,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...a.org, default_policy_id: policyA });
    expect((await orgA(policyA)).body.default_policy_id).toBe(policyA);
    const m = await monitorA(policyA);
    expect(m.status).toBe(200);
    expect(m.body.policy_id).toBe(policyA);
  });

  it("refuses another org's policy with 404 and keeps the default", async () => {
    const res = await a.admin.put(`/orgs/${a.org.id}/default-policy`, { policy_id: policyB });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: true, error_code: 'NOT_FOUND' });
    expect((await orgA(policyA)).body.default_policy_id).toBe(policyA);
  });

  it('accepts a preset; null clears the default', async () => {
    const preset = await a.admin.put<OrgBody>(`/orgs/${a.org.id}/default-policy`, {
      policy_id: PRESET_BASIC,
    });
    expect(preset.status).toBe(200);
    expect(preset.body.default_policy_id).toBe(PRESET_BASIC);
    const cleared = await a.admin.put<OrgBody>(`/orgs/${a.org.id}/default-policy`, {
      policy_id: null,
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.default_policy_id).toBeNull();
    expect((await monitorA(PRESET_BASIC)).body.policy_id).toBe(PRESET_BASIC);
  });

  it("staff set any org's default, to a policy of that org", async () => {
    const res = await staff.put<OrgBody>(`/orgs/${b.org.id}/default-policy`, {
      policy_id: policyB,
    });
    expect(res.status).toBe(200);
    expect(res.body.default_policy_id).toBe(policyB);
    // A policy of org A is not one org B can read, whoever asks.
    const refused = await staff.put(`/orgs/${b.org.id}/default-policy`, { policy_id: policyA });
    expect(refused.status).toBe(404);
  });
});

describe('validation', () => {
  let orgId: string;

  beforeAll(async () => {
    orgId = (await staff.post<OrgBody>('/orgs', { name: 'validation' })).body.id;
  });

  interface Detail {
    detail: { loc: (string | number)[]; msg: string; type: string }[];
  }

  it('names unknown fields (422, detail body)', async () => {
    const res = await staff.post<Detail>('/orgs', { name: 'x', colour: 'blue' });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d) => d.msg).join(' ')).toContain('colour');
    const key = await staff.post<Detail>(`/orgs/${orgId}/keys`, { roles: 'admin' });
    expect(key.status).toBe(422);
    expect(key.body.detail.map((d) => d.msg).join(' ')).toContain('roles');
  });

  it('refuses bad values with their location', async () => {
    const cases: [string, string, unknown, (string | number)[]][] = [
      ['POST', '/orgs', {}, ['body', 'name']],
      ['POST', '/orgs', { name: '' }, ['body', 'name']],
      ['POST', '/orgs', { name: 'x'.repeat(256) }, ['body', 'name']],
      ['POST', '/orgs', { name: 'x', kind: 'enterprise' }, ['body', 'kind']],
      ['POST', `/orgs/${orgId}/keys`, { role: 'owner' }, ['body', 'role']],
      ['POST', `/orgs/${orgId}/keys`, { staff: 'yes' }, ['body', 'staff']],
      ['POST', `/orgs/${orgId}/keys`, { user_id: '' }, ['body', 'user_id']],
      ['PUT', `/orgs/${orgId}/default-policy`, {}, ['body', 'policy_id']],
      ['PUT', `/orgs/${orgId}/default-policy`, { policy_id: 5 }, ['body', 'policy_id']],
    ];
    for (const [method, path, body, loc] of cases) {
      const res = await staff.call<Detail>(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(422);
      expect(res.body.detail.map((d) => d.loc)).toContainEqual(loc);
    }
  });

  it('answers a missing body, a non-object body and malformed JSON in the detail form', async () => {
    const missing = await staff.call<Detail>('POST', '/orgs');
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]!.loc).toEqual(['body']);
    const array = await staff.post<Detail>('/orgs', [1]);
    expect(array.status).toBe(422);
    expect(array.body.detail[0]!.loc).toEqual(['body']);
    const malformed = await staff.post<Detail>('/orgs', '{"name": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0]!.type).toBe('json_invalid');
  });
});

describe('/openapi.json', () => {
  it('lists every org and key route with its methods and security', async () => {
    const res = await anon.get<{
      paths: Record<string, Record<string, { security?: unknown[]; responses: object }>>;
      components: { schemas: Record<string, unknown> };
    }>('/openapi.json');
    expect(res.status).toBe(200);
    const expected: Record<string, string[]> = {
      '/orgs': ['get', 'post'],
      '/orgs/{org_id}': ['get'],
      '/orgs/{org_id}/default-policy': ['put'],
      '/orgs/{org_id}/keys': ['get', 'post'],
      '/orgs/{org_id}/keys/{key_id}': ['delete'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      const item = res.body.paths[path];
      expect(item, path).toBeDefined();
      expect(Object.keys(item!).sort(), path).toEqual(methods);
      for (const m of methods) {
        expect(item![m]!.security, `${m} ${path}`).toEqual([{ bearer: [] }, { apiKeyHeader: [] }]);
      }
    }
    const created = res.body.components.schemas.ApiKeyCreated as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(created.properties)).toContain('key');
    const listed = res.body.components.schemas.ApiKey as { properties: Record<string, unknown> };
    expect(Object.keys(listed.properties)).not.toContain('key');
    expect(Object.keys(listed.properties)).not.toContain('key_hash');
  });
});
