import type { Activity, ApiKeyRecord, Org, Policy, PolicyVersion } from './types.js';

/**
 * Storage ports. Each has an embedded adapter (SQLite), an in-memory twin and, in distributed
 * mode, a production adapter; all pass the contract suites in @guard/testing.
 */

export interface OrgStore {
  create(org: Org): Promise<void>;
  get(id: string): Promise<Org | null>;
  list(): Promise<Org[]>;
  setDefaultPolicy(id: string, policyId: string | null): Promise<void>;
}

export interface ApiKeyStore {
  create(key: ApiKeyRecord): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  get(id: string): Promise<ApiKeyRecord | null>;
  listByOrg(orgId: string): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; returns false when no such key exists. */
  revoke(id: string, at: string): Promise<boolean>;
  count(): Promise<number>;
}

export interface PageRequest {
  limit: number | null;
  offset: number;
}

export interface PolicyPage {
  items: Policy[];
  total: number;
}

export interface PolicyStore {
  /** Inserts the policy and its first version atomically. */
  insert(policy: Policy, version: PolicyVersion): Promise<void>;
  /** Replaces the stored policy and appends a version atomically. */
  replace(policy: Policy, version: PolicyVersion): Promise<void>;
  /** Hides the policy from reads; its versions stay readable. */
  markDeleted(orgId: string, policyId: string, version: PolicyVersion): Promise<void>;
  /** A live (not deleted) policy of the org. */
  get(orgId: string, policyId: string): Promise<Policy | null>;
  /** The last stored state of a policy, deleted or not, with its deletion flag. */
  getLastState(
    orgId: string,
    policyId: string,
  ): Promise<{ policy: Policy; deleted: boolean } | null>;
  /** Live policies of the org, most recently updated first (ties: higher id first). */
  list(orgId: string, page: PageRequest): Promise<PolicyPage>;
  /** Versions newest first. */
  listVersions(orgId: string, policyId: string): Promise<PolicyVersion[]>;
}

export interface ActivityQuery {
  /** Return activities with an id strictly greater than this (the export cursor). */
  after?: string | undefined;
  /** Exclusive time bounds, epoch milliseconds. */
  since?: number | undefined;
  until?: number | undefined;
  alarmOnly?: boolean | undefined;
  limit: number;
}

export interface ActivityPage {
  items: Activity[];
  has_more: boolean;
}

export interface ActivityStore {
  /** Idempotent by id: recording the same activity twice stores it once. */
  record(activities: Activity[]): Promise<void>;
  /** Oldest first, scoped to one org. */
  list(orgId: string, query: ActivityQuery): Promise<ActivityPage>;
  get(orgId: string, id: string): Promise<Activity | null>;
}

/**
 * Where recorded decisions go: a batching writer over the ActivityStore in embedded mode, a
 * Kafka producer in distributed mode. `publish` resolves once the activity is durable.
 */
export interface ActivitySink {
  publish(activity: Activity): Promise<void>;
  /** Write out anything buffered (graceful shutdown). */
  flush(): Promise<void>;
}
