import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ApiKeyCreated,
  ApiKeyList,
  ApiKeyRevoked,
  ErrorBody,
  MonitorResponse,
  Org,
  OrgList,
  Policy,
  PolicyList,
  ValidationErrorBody,
} from '@guard/contracts';
import { expectShape } from '../testing/expect-shape.js';
import { startInProcessApi, type ApiClient, type InProcessApi } from '../testing/in-process.js';

/**
 * Organizations and keys over HTTP only, starting from the one staff key bootstrapped on an empty
 * store, as a deployment without a data directory (and so without the CLI) must. In process over
 * the memory stores, which have no auth cache in front: a revoked key fails on the next request.
 */

const ID = /^[0-9a-f]{24}$/;
const PRESET_BASIC = '000000000000000000000001';

let api: InProcessApi;
let staff: ApiClient;
let anon: ApiClient;

beforeAll(async () => {
  api = await startInProcessApi();
  staff = api.client(api.adminKey);
  anon = api.client(null);
});
afterAll(async () => {
  await api?.close();
});

const error = (body: unknown) => expectShape(ErrorBody, body);
const detail = (body: unknown) => expectShape(ValidationErrorBody, body).detail;

/** An org made by staff, with an admin key made by staff for it. */
async function orgWithAdmin(name: string) {
  const res = await staff.post('/orgs', { name });
  expect(res.status).toBe(201);
  const org = expectShape(Org, res.body);
  const key = await staff.post(`/orgs/${org.id}/keys`, { role: 'admin', user_id: `${name}-admin` });
  expect(key.status).toBe(201);
  const adminKey = expectShape(ApiKeyCreated, key.body);
  return { org, adminKey, admin: api.client(adminKey.key) };
}

describe('the bootstrap key', () => {
  it('is a staff admin key of the default org', async () => {
    const list = expectShape(OrgList, (await staff.get('/orgs')).body);
    const def = list.orgs.find((o) => o.name === 'default')!;
    expect(def.id).toBe(api.defaultOrgId);
    const keys = expectShape(ApiKeyList, (await staff.get(`/orgs/${def.id}/keys`)).body);
    expect(keys.keys).toHaveLength(1);
    expect(keys.keys[0]).toMatchObject({
      role: 'admin',
      staff: true,
      user_id: 'admin',
      revoked_at: null,
    });
  });
});

describe('staff manage organizations', () => {
  it('creates an org (201), reads it and lists it, oldest first', async () => {
    const res = await staff.post('/orgs', { name: 'acme', kind: 'red_team' });
    expect(res.status).toBe(201);
    const org = expectShape(Org, res.body);
    expect(org).toEqual({
      id: expect.stringMatching(ID),
      name: 'acme',
      kind: 'red_team',
      default_policy_id: null,
      created_at: expect.any(String),
    });
    expect(Date.parse(org.created_at)).not.toBeNaN();
    expect(expectShape(Org, (await staff.get(`/orgs/${org.id}`)).body)).toEqual(org);
    const list = expectShape(OrgList, (await staff.get('/orgs')).body);
    expect(list.orgs).toContainEqual(org);
    expect(list.orgs[0]?.name).toBe('default');
  });

  it('defaults kind to standard', async () => {
    expect(expectShape(Org, (await staff.post('/orgs', { name: 'plain' })).body).kind).toBe(
      'standard',
    );
  });

  it('answers 404 for an org that does not exist', async () => {
    const none = '000000000000000000000000';
    for (const res of [
      await staff.get(`/orgs/${none}`),
      await staff.get(`/orgs/${none}/keys`),
      await staff.post(`/orgs/${none}/keys`, {}),
      await staff.put(`/orgs/${none}/default-policy`, { policy_id: null }),
    ]) {
      expect(res.status).toBe(404);
      expect(error(res.body).error_code).toBe('NOT_FOUND');
    }
  });

  it('needs a key', async () => {
    expect((await anon.get('/orgs')).status).toBe(401);
    expect((await anon.post('/orgs', { name: 'x' })).status).toBe(401);
  });
});

describe('org admins manage their keys', () => {
  let a: Awaited<ReturnType<typeof orgWithAdmin>>;
  let member: z.output<typeof ApiKeyCreated>;

  beforeAll(async () => {
    a = await orgWithAdmin('org-a');
    member = expectShape(
      ApiKeyCreated,
      (await a.admin.post(`/orgs/${a.org.id}/keys`, { user_id: 'alice', name: 'alice laptop' }))
        .body,
    );
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
  });

  it('the admin reads its own org but not the org list', async () => {
    expect(expectShape(Org, (await a.admin.get(`/orgs/${a.org.id}`)).body)).toEqual(a.org);
    const list = await a.admin.get('/orgs');
    expect(list.status).toBe(403);
    expect(error(list.body).error_code).toBe('STAFF_REQUIRED');
  });

  it('the admin creates a member key (defaults: member, its own user id)', async () => {
    expect(member).toMatchObject({
      org_id: a.org.id,
      user_id: 'alice',
      role: 'member',
      staff: false,
      name: 'alice laptop',
      revoked_at: null,
    });
    const defaults = await a.admin.post(`/orgs/${a.org.id}/keys`, {});
    expect(defaults.status).toBe(201);
    expect(expectShape(ApiKeyCreated, defaults.body)).toMatchObject({
      user_id: 'org-a-admin',
      role: 'member',
      name: '',
    });
  });

  it('the new key works on /policies and on its own org', async () => {
    const m = api.client(member.key);
    const list = expectShape(PolicyList, (await m.get('/policies')).body);
    expect(list.policies.length).toBeGreaterThanOrEqual(4);
    expect((await m.get(`/orgs/${a.org.id}`)).status).toBe(200);
  });

  it('lists the keys without the keys or their hashes', async () => {
    const res = await a.admin.get(`/orgs/${a.org.id}/keys`);
    // ApiKey declares neither `key` nor `key_hash`: expectShape refuses an answer carrying them.
    const keys = expectShape(ApiKeyList, res.body).keys;
    expect(keys.map((k) => k.id)).toEqual(expect.arrayContaining([a.adminKey.id, member.id]));
    const { key: _key, ...shown } = member;
    expect(keys.find((k) => k.id === member.id)).toEqual(shown);
  });

  it('a member key gets 403 ADMIN_REQUIRED on key management', async () => {
    const m = api.client(member.key);
    for (const res of [
      await m.get(`/orgs/${a.org.id}/keys`),
      await m.post(`/orgs/${a.org.id}/keys`, { role: 'admin' }),
      await m.del(`/orgs/${a.org.id}/keys/${a.adminKey.id}`),
      await m.put(`/orgs/${a.org.id}/default-policy`, { policy_id: null }),
    ]) {
      expect(res.status).toBe(403);
      expect(error(res.body).error_code).toBe('ADMIN_REQUIRED');
    }
  });

  it('a non-staff admin cannot create a staff key; staff can', async () => {
    const res = await a.admin.post(`/orgs/${a.org.id}/keys`, { role: 'admin', staff: true });
    expect(res.status).toBe(403);
    expect(error(res.body).error_code).toBe('STAFF_REQUIRED');
    const fromStaff = expectShape(
      ApiKeyCreated,
      (
        await staff.post(`/orgs/${a.org.id}/keys`, {
          role: 'member',
          staff: true,
          user_id: 'operator',
        })
      ).body,
    );
    expect(fromStaff).toMatchObject({ staff: true, role: 'member', org_id: a.org.id });
    // The new staff key acts across orgs.
    expect((await api.client(fromStaff.key).get('/orgs')).status).toBe(200);
  });

  it('revoking a key makes it answer 401 at once, and shows in the list', async () => {
    const bobKey = expectShape(
      ApiKeyCreated,
      (await a.admin.post(`/orgs/${a.org.id}/keys`, { user_id: 'bob' })).body,
    );
    const bob = api.client(bobKey.key);
    expect((await bob.get('/policies')).status).toBe(200);

    const revoked = await a.admin.del(`/orgs/${a.org.id}/keys/${bobKey.id}`);
    expect(expectShape(ApiKeyRevoked, revoked.body)).toEqual({ id: bobKey.id, revoked: true });
    const after = await bob.get('/policies');
    expect(after.status).toBe(401);
    expect(error(after.body).error_code).toBe('UNAUTHORIZED');

    const listed = expectShape(
      ApiKeyList,
      (await a.admin.get(`/orgs/${a.org.id}/keys`)).body,
    ).keys.find((k) => k.id === bobKey.id)!;
    expect(Date.parse(listed.revoked_at!)).not.toBeNaN();

    // Revoking again is harmless and keeps the first revocation time.
    expect((await a.admin.del(`/orgs/${a.org.id}/keys/${bobKey.id}`)).status).toBe(200);
    const again = expectShape(ApiKeyList, (await a.admin.get(`/orgs/${a.org.id}/keys`)).body);
    expect(again.keys.find((k) => k.id === bobKey.id)?.revoked_at).toBe(listed.revoked_at);
  });

  it('staff revoke keys of any org', async () => {
    const carol = expectShape(
      ApiKeyCreated,
      (await a.admin.post(`/orgs/${a.org.id}/keys`, { user_id: 'carol' })).body,
    );
    expect((await staff.del(`/orgs/${a.org.id}/keys/${carol.id}`)).status).toBe(200);
    expect((await api.client(carol.key).get('/policies')).status).toBe(401);
  });

  it('an unknown key id answers 404', async () => {
    const res = await a.admin.del(`/orgs/${a.org.id}/keys/000000000000000000000000`);
    expect(res.status).toBe(404);
    expect(error(res.body).error_code).toBe('NOT_FOUND');
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
    for (const res of [
      await a.admin.get(`/orgs/${b.org.id}`),
      await a.admin.get(`/orgs/${b.org.id}/keys`),
      await a.admin.post(`/orgs/${b.org.id}/keys`, { role: 'admin' }),
      await a.admin.del(`/orgs/${b.org.id}/keys/${b.adminKey.id}`),
      await a.admin.put(`/orgs/${b.org.id}/default-policy`, { policy_id: null }),
      // A key of org B named under org A's path is not found either.
      await a.admin.del(`/orgs/${a.org.id}/keys/${b.adminKey.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(error(res.body).error_code).toBe('NOT_FOUND');
    }
    expect((await b.admin.get('/policies')).status).toBe(200);
  });

  it('an admin of an org cannot create orgs (403 STAFF_REQUIRED), whatever the body', async () => {
    const res = await a.admin.post('/orgs', { name: 'mine' });
    expect(res.status).toBe(403);
    expect(error(res.body).error_code).toBe('STAFF_REQUIRED');
    expect((await a.admin.post('/orgs', { nope: 1 })).status).toBe(403);
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
    policyA = expectShape(
      Policy,
      (
        await a.admin.post('/policies', {
          name: 'A codenames',
          categories: { codenames: 'Never mention the codename "Project Falcon".' },
        })
      ).body,
    ).id;
    policyB = expectShape(Policy, (await b.admin.post('/policies', { name: 'B policy' })).body).id;
  });

  const monitoredPolicy = async (c: ApiClient) => {
    const res = await c.post('/guard/monitor', { text: 'What is the status of Project Falcon?' });
    return expectShape(MonitorResponse, res.body).policy_id;
  };

  it('an admin sets its own policy as default; monitor applies it', async () => {
    const res = await a.admin.put(`/orgs/${a.org.id}/default-policy`, { policy_id: policyA });
    expect(res.status).toBe(200);
    expect(expectShape(Org, res.body)).toEqual({ ...a.org, default_policy_id: policyA });
    const got = expectShape(Org, (await a.admin.get(`/orgs/${a.org.id}`)).body);
    expect(got.default_policy_id).toBe(policyA);
    expect(await monitoredPolicy(a.admin)).toBe(policyA);
  });

  it("refuses another org's policy, or an unknown one, with 404 and keeps the default", async () => {
    for (const policy_id of [policyB, 'ffffffffffffffffffffffff']) {
      const res = await a.admin.put(`/orgs/${a.org.id}/default-policy`, { policy_id });
      expect(res.status).toBe(404);
      expect(error(res.body).error_code).toBe('NOT_FOUND');
    }
    const got = expectShape(Org, (await a.admin.get(`/orgs/${a.org.id}`)).body);
    expect(got.default_policy_id).toBe(policyA);
  });

  it('accepts a preset; null clears the default', async () => {
    const preset = await a.admin.put(`/orgs/${a.org.id}/default-policy`, {
      policy_id: PRESET_BASIC,
    });
    expect(expectShape(Org, preset.body).default_policy_id).toBe(PRESET_BASIC);
    const cleared = await a.admin.put(`/orgs/${a.org.id}/default-policy`, { policy_id: null });
    expect(expectShape(Org, cleared.body).default_policy_id).toBeNull();
    expect(await monitoredPolicy(a.admin)).toBe(PRESET_BASIC);
  });

  it("staff set any org's default, to a policy of that org", async () => {
    const res = await staff.put(`/orgs/${b.org.id}/default-policy`, { policy_id: policyB });
    expect(expectShape(Org, res.body).default_policy_id).toBe(policyB);
    // A policy of org A is not one org B can read, whoever asks.
    expect(
      (await staff.put(`/orgs/${b.org.id}/default-policy`, { policy_id: policyA })).status,
    ).toBe(404);
  });
});

describe('validation', () => {
  let orgId: string;

  beforeAll(async () => {
    orgId = expectShape(Org, (await staff.post('/orgs', { name: 'validation' })).body).id;
  });

  it('names unknown fields (422, detail body)', async () => {
    const res = await staff.post('/orgs', { name: 'x', colour: 'blue' });
    expect(res.status).toBe(422);
    expect(
      detail(res.body)
        .map((d) => d.msg)
        .join(' '),
    ).toContain('colour');
    const key = await staff.post(`/orgs/${orgId}/keys`, { roles: 'admin' });
    expect(key.status).toBe(422);
    expect(
      detail(key.body)
        .map((d) => d.msg)
        .join(' '),
    ).toContain('roles');
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
      const res = await staff.call(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(422);
      expect(detail(res.body).map((d) => d.loc)).toContainEqual(loc);
    }
  });

  it('answers a missing body, a non-object body and malformed JSON in the detail form', async () => {
    const missing = await staff.call('POST', '/orgs');
    expect(missing.status).toBe(422);
    expect(detail(missing.body)[0]?.loc).toEqual(['body']);
    const array = await staff.post('/orgs', [1]);
    expect(array.status).toBe(422);
    expect(detail(array.body)[0]?.loc).toEqual(['body']);
    const malformed = await staff.post('/orgs', undefined, { raw: '{"name": ' });
    expect(malformed.status).toBe(400);
    expect(detail(malformed.body)[0]?.type).toBe('json_invalid');
  });
});
