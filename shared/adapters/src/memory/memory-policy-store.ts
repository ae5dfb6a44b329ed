import {
  clone,
  type Policy,
  type PolicyListRequest,
  type PolicyPage,
  type PolicyStore,
  type PolicyVersion,
  type PolicyWriteResult,
  type StoredPolicy,
} from '@guard/domain';
import {
  decodePolicyCursor,
  encodePolicyCursor,
  type PolicyListKey,
} from '../policy-list-cursor.js';

interface Entry {
  policy: Policy;
  deleted: boolean;
  revision: number;
  versions: PolicyVersion[];
}

const conflict: PolicyWriteResult = { ok: false, reason: 'conflict' };

/** List order: most recently updated first, ties by higher id. */
const listKey = (p: Policy): PolicyListKey => [p.updated_at, p.id];
const before = (a: PolicyListKey, b: PolicyListKey): boolean =>
  a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

export class MemoryPolicyStore implements PolicyStore {
  private readonly entries = new Map<string, Entry>();

  private entry(orgId: string, policyId: string): Entry | undefined {
    const e = this.entries.get(policyId);
    return e && e.policy.org_id === orgId ? e : undefined;
  }

  /** The entry when it is live at `revision`. Checked and written in one turn of the event loop. */
  private writable(orgId: string, policyId: string, revision: number): Entry | undefined {
    const e = this.entry(orgId, policyId);
    return e && !e.deleted && e.revision === revision ? e : undefined;
  }

  async insert(policy: Policy, version: PolicyVersion): Promise<void> {
    if (!policy.org_id) throw new Error('presets are not stored');
    if (this.entries.has(policy.id)) throw new Error(`policy ${policy.id} exists`);
    this.entries.set(policy.id, {
      policy: clone(policy),
      deleted: false,
      revision: 0,
      versions: [clone(version)],
    });
  }

  async replace(
    policy: Policy,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult> {
    const e = this.writable(policy.org_id ?? '', policy.id, expectedRevision);
    if (!e) return conflict;
    e.policy = clone(policy);
    e.versions.push(clone(version));
    return { ok: true, revision: ++e.revision };
  }

  async markDeleted(
    orgId: string,
    policyId: string,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult> {
    const e = this.writable(orgId, policyId, expectedRevision);
    if (!e) return conflict;
    e.deleted = true;
    e.versions.push(clone(version));
    return { ok: true, revision: ++e.revision };
  }

  async get(orgId: string, policyId: string): Promise<Policy | null> {
    const e = this.entry(orgId, policyId);
    return e && !e.deleted ? clone(e.policy) : null;
  }

  async getLastState(orgId: string, policyId: string): Promise<StoredPolicy | null> {
    const e = this.entry(orgId, policyId);
    return e ? { policy: clone(e.policy), deleted: e.deleted, revision: e.revision } : null;
  }

  async list(orgId: string, request: PolicyListRequest): Promise<PolicyPage> {
    const after = request.cursor ? decodePolicyCursor(request.cursor) : null;
    const live = this.live(orgId)
      .filter((p) => after === null || before(after, listKey(p)))
      .sort((a, b) => (before(listKey(a), listKey(b)) ? -1 : 1));
    const items = live.slice(0, request.limit);
    const last = items[items.length - 1];
    const nextCursor =
      live.length > items.length && last ? encodePolicyCursor(listKey(last)) : null;
    return { items: items.map(clone), nextCursor };
  }

  async count(orgId: string): Promise<number> {
    return this.live(orgId).length;
  }

  async listVersions(orgId: string, policyId: string): Promise<PolicyVersion[]> {
    const e = this.entry(orgId, policyId);
    return e ? [...e.versions].reverse().map(clone) : [];
  }

  private live(orgId: string): Policy[] {
    return [...this.entries.values()]
      .filter((e) => e.policy.org_id === orgId && !e.deleted)
      .map((e) => e.policy);
  }
}
