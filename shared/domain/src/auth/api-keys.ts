import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError, notFound } from '@guard/platform';
import type { ApiKeyStore, OrgStore } from '../ports.js';
import type { ApiKeyRecord, Org, OrgKind, Principal, Role } from '../types.js';

export interface AuthDeps {
  orgs: OrgStore;
  keys: ApiKeyStore;
  newId: () => string;
  now: () => Date;
}

const KEY_PREFIX = 'gk_';
const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** 40 base62 characters: about 238 bits of entropy, so a fast hash is the right way to store it. */
export function generateApiKey(): string {
  const bytes = randomBytes(40);
  let out = KEY_PREFIX;
  for (const b of bytes) out += KEY_ALPHABET[b % 62];
  return out;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export async function createOrg(
  deps: AuthDeps,
  name: string,
  kind: OrgKind = 'standard',
): Promise<Org> {
  const org: Org = {
    id: deps.newId(),
    name,
    kind,
    default_policy_id: null,
    created_at: deps.now().toISOString(),
  };
  await deps.orgs.create(org);
  return org;
}

export interface NewApiKey {
  orgId: string;
  userId: string;
  role: Role;
  staff?: boolean;
  name?: string;
  /** Use this key instead of generating one (bootstrap from configuration). */
  presetKey?: string;
}

export async function createApiKey(
  deps: AuthDeps,
  input: NewApiKey,
): Promise<{ key: string; record: ApiKeyRecord }> {
  const org = await deps.orgs.get(input.orgId);
  if (!org) throw notFound('Organization');
  const key = input.presetKey ?? generateApiKey();
  const record: ApiKeyRecord = {
    id: deps.newId(),
    org_id: org.id,
    user_id: input.userId,
    role: input.role,
    staff: input.staff ?? false,
    name: input.name ?? '',
    key_hash: hashApiKey(key),
    prefix: key.slice(0, 10),
    created_at: deps.now().toISOString(),
    revoked_at: null,
  };
  await deps.keys.create(record);
  return { key, record };
}

export async function revokeApiKey(deps: AuthDeps, keyId: string): Promise<void> {
  const ok = await deps.keys.revoke(keyId, deps.now().toISOString());
  if (!ok) throw notFound('API key');
}

const unauthorized = () => new AppError('UNAUTHORIZED', 'Missing or invalid API key');

/** Resolve a presented key to the caller. Unknown, revoked or orphaned keys are all a plain 401. */
export async function authenticate(
  deps: Pick<AuthDeps, 'orgs' | 'keys'>,
  presented: string | undefined,
): Promise<Principal> {
  if (!presented || presented.length > 512) throw unauthorized();
  const hash = hashApiKey(presented);
  const record = await deps.keys.findByHash(hash);
  // The lookup is by hash, so timing reveals nothing about the key; compare again in constant
  // time so that a store doing prefix or case-insensitive matching cannot let a near-miss in.
  if (!record || !timingSafeEqual(Buffer.from(record.key_hash, 'hex'), Buffer.from(hash, 'hex'))) {
    throw unauthorized();
  }
  if (record.revoked_at) throw unauthorized();
  const org = await deps.orgs.get(record.org_id);
  if (!org) throw unauthorized();
  return {
    org_id: org.id,
    org_kind: org.kind,
    user_id: record.user_id,
    key_id: record.id,
    role: record.role,
    staff: record.staff,
  };
}

/**
 * First start with an empty key store: create a default org and an admin key. The key is also
 * staff (it is the operator's), so that orgs and keys can be made over HTTP from it, as a
 * distributed deployment with no data directory for the CLI must. Returns the key (to print
 * once) or null when keys already exist.
 */
export async function bootstrapIfEmpty(
  deps: AuthDeps,
  presetKey: string | undefined,
): Promise<{ org: Org; key: string; generated: boolean } | null> {
  if (await deps.keys.hasAnyKey()) return null;
  const org = await createOrg(deps, 'default', 'standard');
  const { key } = await createApiKey(deps, {
    orgId: org.id,
    userId: 'admin',
    role: 'admin',
    staff: true,
    name: 'bootstrap admin key',
    ...(presetKey ? { presetKey } : {}),
  });
  return { org, key, generated: !presetKey };
}
