import { newId } from '@guard/platform';
import {
  DEFAULT_BLOCK_MESSAGE,
  DEFAULT_THRESHOLDS,
  type ApiKeyRecord,
  type Org,
  type Policy,
  type PolicyVersion,
  type Principal,
} from '@guard/domain';

/** The caller of a domain function: an admin key of a standard organization. */
export function aPrincipal(over: Partial<Principal> = {}): Principal {
  return {
    org_id: 'o',
    org_kind: 'standard',
    user_id: 'u',
    key_id: 'k',
    role: 'admin',
    staff: false,
    ...over,
  };
}

export function anOrg(over: Partial<Org> = {}): Org {
  return {
    id: newId(),
    name: 'acme',
    kind: 'standard',
    default_policy_id: null,
    created_at: new Date().toISOString(),
    ...over,
  };
}

export function aKey(orgId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = newId();
  return {
    id,
    org_id: orgId,
    user_id: 'user-1',
    role: 'admin',
    staff: false,
    name: 'test key',
    key_hash: `${id}${'0'.repeat(40)}`,
    prefix: 'gk_test',
    created_at: new Date().toISOString(),
    revoked_at: null,
    ...over,
  };
}

export function aPolicy(orgId: string, over: Partial<Policy> = {}): Policy {
  const now = new Date().toISOString();
  return {
    id: newId(),
    org_id: orgId,
    is_preset: false,
    name: 'p',
    description: '',
    rules: { r1: 'no violence' },
    rule_modes: {},
    mode: 'content_moderation',
    ...DEFAULT_THRESHOLDS,
    scanners_config: {},
    block_message: DEFAULT_BLOCK_MESSAGE,
    created_at: now,
    updated_at: now,
    ...over,
  };
}

export function aVersion(p: Policy, over: Partial<PolicyVersion> = {}): PolicyVersion {
  return {
    id: newId(),
    policy_id: p.id,
    org_id: p.org_id ?? '',
    operation: 'create',
    timestamp: p.updated_at,
    user_id: 'user-1',
    diff: [],
    ...over,
  };
}

export function anActivity(
  orgId: string,
  over: Partial<import('@guard/domain').Activity> = {},
): import('@guard/domain').Activity {
  const created = over.created_at ? Date.parse(over.created_at) : Date.now();
  return {
    id: newId(created),
    org_id: orgId,
    created_at: new Date(created).toISOString(),
    endpoint: 'monitor',
    policy_id: null,
    policy_ids: [],
    model: null,
    api_key_id: 'key-1',
    user_id: 'user-1',
    alarm: false,
    blocked: false,
    pre_analysis: { violation: 0 },
    post_generation_analysis: null,
    latency_ms: 1.5,
    input_excerpt: 'hello',
    output_excerpt: null,
    metadata: {},
    ...over,
  };
}
