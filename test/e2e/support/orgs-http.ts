import { client, eventually } from './guard-server.js';

/**
 * Organizations and keys over HTTP (`/orgs`), starting from a staff key: what the `guard` CLI
 * does on a local data directory, which a distributed deployment does not have.
 */

export interface OrgKeys {
  orgId: string;
  adminKey: string;
  adminKeyId: string;
  memberKey: string;
  memberKeyId: string;
}

export interface CreatedKey {
  id: string;
  key: string;
}

function expectStatus(what: string, res: { status: number; body: unknown }, status: number): void {
  if (res.status !== status)
    throw new Error(`${what} answered ${res.status}, not ${status}: ${JSON.stringify(res.body)}`);
}

/** A new key of `orgId`, made with `key` (staff, or an admin of that org). */
export async function createKey(
  baseUrl: string,
  key: string,
  orgId: string,
  body: { user_id: string; role: 'admin' | 'member'; name?: string },
): Promise<CreatedKey> {
  const res = await client(baseUrl, key).post<CreatedKey>(`/orgs/${orgId}/keys`, body);
  expectStatus(`POST /orgs/${orgId}/keys`, res, 201);
  return res.body;
}

/** A new org with an admin and a member key, made by staff. */
export async function makeOrg(
  baseUrl: string,
  staffKey: string,
  name: string,
  kind: 'standard' | 'red_team' = 'standard',
): Promise<OrgKeys> {
  const org = await client(baseUrl, staffKey).post<{ id: string }>('/orgs', { name, kind });
  expectStatus('POST /orgs', org, 201);
  const orgId = org.body.id;
  const admin = await createKey(baseUrl, staffKey, orgId, {
    user_id: `${name}-admin`,
    role: 'admin',
  });
  const member = await createKey(baseUrl, staffKey, orgId, {
    user_id: `${name}-member`,
    role: 'member',
  });
  return {
    orgId,
    adminKey: admin.key,
    adminKeyId: admin.id,
    memberKey: member.key,
    memberKeyId: member.id,
  };
}

/** The id of the `default` org, the one the bootstrap staff key belongs to. */
export async function defaultOrgId(baseUrl: string, staffKey: string): Promise<string> {
  const res = await client(baseUrl, staffKey).get<{ orgs: { id: string; name: string }[] }>(
    '/orgs',
  );
  expectStatus('GET /orgs', res, 200);
  const org = res.body.orgs.find((o) => o.name === 'default');
  if (!org) throw new Error('GET /orgs lists no org named "default"');
  return org.id;
}

/**
 * The status `GET /policies` answers with `key`, asked until it is 401 or `withinMs` has passed.
 * A revocation applies at once in the process that made it; the other processes of a deployment
 * see it when their auth cache entry expires (GUARD_AUTH_CACHE_TTL_MS).
 */
export async function statusOnceRevoked(
  baseUrl: string,
  key: string,
  withinMs: number,
): Promise<number> {
  const res = await eventually(
    () => client(baseUrl, key).get('/policies'),
    (r) => r.status === 401,
    withinMs,
  );
  return res.status;
}
