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

/**
 * Says when orgs, keys or policies were changed by someone else (the CLI, another worker, another
 * pod), so that caches of them can drop what they hold at once instead of waiting for their TTL.
 * `version()` runs on every cached lookup: it must be cheap and synchronous, and return a new
 * value after every such change.
 */
export interface ConfigChanges {
  version(): number;
}

export interface ApiKeyStore {
  create(key: ApiKeyRecord): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  get(id: string): Promise<ApiKeyRecord | null>;
  listByOrg(orgId: string): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; returns false when no such key exists. */
  revoke(id: string, at: string): Promise<boolean>;
  /**
   * Whether any key was ever created, revoked ones included (first-start bootstrap). An existence
   * check, not a count: a store answers it from the first row it finds.
   */
  hasAnyKey(): Promise<boolean>;
}

/**
 * A policy as stored, with where it stands in its history. `revision` is 0 when the policy is
 * inserted and one more with every replace or delete (so it is also the number of versions
 * after the first); a write names the revision it was computed from and is refused if another
 * write landed in between.
 */
export interface StoredPolicy {
  policy: Policy;
  deleted: boolean;
  revision: number;
}

/**
 * The outcome of a compare-and-set write. `conflict`: the policy is not live at the expected
 * revision (another write landed first, it was deleted, or there is no such policy in the org);
 * nothing was written. The caller re-reads to learn which.
 */
export type PolicyWriteResult = { ok: true; revision: number } | { ok: false; reason: 'conflict' };

export interface PolicyListRequest {
  limit: number;
  /** Where the previous page ended (its `nextCursor`); absent or null for the first page. */
  cursor?: string | null | undefined;
}

export interface PolicyPage {
  items: Policy[];
  /**
   * Opaque position after the last item, or null when no live policy follows it. A position,
   * not a reference to a row: it stays valid when that policy is later updated or deleted.
   */
  nextCursor: string | null;
}

/**
 * Shaped so that a wide-column store can implement it without scans or SQL OFFSET: writes are
 * compare-and-set on one policy's revision, lists page by cursor, and the only aggregate is a
 * per-org count.
 */
export interface PolicyStore {
  /** Inserts the policy at revision 0 and its first version atomically; refuses a known id. */
  insert(policy: Policy, version: PolicyVersion): Promise<void>;
  /**
   * If the policy is live at `expectedRevision`: replaces it and appends the version atomically,
   * at the next revision. Otherwise writes nothing and answers a conflict.
   */
  replace(
    policy: Policy,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult>;
  /**
   * As `replace`, but hides the policy from reads instead; its last state and versions stay
   * readable.
   */
  markDeleted(
    orgId: string,
    policyId: string,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult>;
  /** A live (not deleted) policy of the org. */
  get(orgId: string, policyId: string): Promise<Policy | null>;
  /** The last stored state of a policy, deleted or not, with its revision. */
  getLastState(orgId: string, policyId: string): Promise<StoredPolicy | null>;
  /** Live policies of the org, most recently updated first (ties: higher id first). */
  list(orgId: string, request: PolicyListRequest): Promise<PolicyPage>;
  /** How many live policies the org has. */
  count(orgId: string): Promise<number>;
  /** Versions newest first. */
  listVersions(orgId: string, policyId: string): Promise<PolicyVersion[]>;
}

export interface ActivityQuery {
  /** Return activities with an id strictly greater than this (the export cursor). */
  after?: string | undefined;
  /**
   * Return activities with an id strictly smaller than this. Ids sort by the millisecond they were
   * made in, so an id bound is a time bound: the export's `since`/`until` and its settled
   * watermark are given this way (see `idFrom` in @guard/platform), which a store reads as one
   * range of its id order.
   */
  before?: string | undefined;
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
