import type { Client, types } from 'cassandra-driver';
import type {
  Policy,
  PolicyListRequest,
  PolicyPage,
  PolicyStore,
  PolicyVersion,
  PolicyWriteResult,
  StoredPolicy,
} from '@guard/domain';
import {
  decodePolicyCursor,
  encodePolicyCursor,
  type PolicyListKey,
} from '../policy-list-cursor.js';
import {
  configQueryOptions,
  readPages,
  type CassandraConfigStoreOptions,
  type ConfigQueryOptions,
} from './cassandra-config-options.js';

/*
 * Policies on Cassandra (infra/cassandra/002_config.cql, docs/cassandra.md).
 *
 * `policies`, one partition per policy, is the truth. Its static columns are the last state
 * (org, JSON doc, updated_at, deleted, revision) and its clustering rows are the versions, keyed
 * by the revision that made them (newest first). Every write is one conditional batch on that one
 * partition: `IF NOT EXISTS` for insert (which refuses a known id whatever its org), `IF
 * revision = ? AND deleted = false AND org_id = ?` for replace and delete. Cassandra applies a
 * single-partition conditional batch atomically and in isolation, so the state and its version
 * land together or not at all, and of two writers from one revision exactly one lands.
 *
 * `policies_by_org` ((org_id), updated_at DESC, policy_id DESC) is the list order, positions
 * only. It lives in another partition, so no write can change it together with the state, and
 * it is never trusted: a row counts only while the state says the policy is live in this org at
 * this updated_at. `list` and `count` read positions, read the state of each, and skip any other
 * row. Each policy has one updated_at, so it is listed at most once.
 *
 * Writers make sure a live policy always has its row: the row of the new position is written
 * before the compare-and-set, the row of the old position removed after it. A crash between the
 * steps leaves an extra row (skipped), never a missing one; a refused write leaves its new row,
 * which it removes itself when the state shows it stale.
 *
 * Readers remove the stale rows they meet. That must not race with a writer whose compare-and-set
 * is still on its way, since the row it wrote first would then be gone when its state lands. So
 * every row of `policies_by_org` is written and removed `USING TIMESTAMP` = a revision of its
 * policy: a writer going to revision r+1 writes its new row at r+1 and removes the old one at
 * r+1; a reader that finds a state at revision m which does not match a row removes that row at
 * m. A removal at m hides only what was written at m or before (a tie goes to the removal), which
 * are writes for states up to m: that state, or ones it replaced. A writer still on its way is
 * going to m+1 or later, so its row survives; and that holds even if the reader's state was
 * stale, since a stale state has a lower revision. Rows whose policy has no state at all are
 * skipped and kept: an insert may be between its two writes.
 *
 * `count` walks the org's positions and checks each: orgs hold few policies, and a separate
 * counter could not be changed together with the state either.
 */

/** Positions asked of `policies_by_org` in one read. */
const INDEX_PAGE = 100;
const VERSION_PAGE = 500;

const conflict: PolicyWriteResult = { ok: false, reason: 'conflict' };

/** A policy's last state, from the static columns of its partition. */
interface PolicyState {
  orgId: string;
  updatedAt: string;
  deleted: boolean;
  revision: number;
  /** The policy as JSON, where the read asked for it. */
  doc: string | undefined;
}

interface Position {
  updatedAt: string;
  policyId: string;
}

export class CassandraPolicyStore implements PolicyStore {
  private readonly client: Client;
  private readonly q: ConfigQueryOptions;
  private readonly cql: {
    insertState: string;
    replaceState: string;
    deleteState: string;
    appendVersion: string;
    state: string;
    stateWithDoc: string;
    versions: string;
    writePosition: string;
    removePosition: string;
    firstPositions: string;
    positionsAfter: string;
    allPositions: string;
  };

  constructor(client: Client, options: CassandraConfigStoreOptions) {
    this.client = client;
    this.q = configQueryOptions(options);
    const ks = this.q.keyspace;
    const live = 'IF revision = ? AND deleted = false AND org_id = ?';
    this.cql = {
      insertState: `INSERT INTO ${ks}.policies (policy_id, org_id, doc, updated_at, deleted, revision)
                    VALUES (?, ?, ?, ?, false, 0) IF NOT EXISTS`,
      replaceState: `UPDATE ${ks}.policies SET doc = ?, updated_at = ?, revision = ?
                     WHERE policy_id = ? ${live}`,
      deleteState: `UPDATE ${ks}.policies SET deleted = true, revision = ? WHERE policy_id = ? ${live}`,
      appendVersion: `INSERT INTO ${ks}.policies (policy_id, seq, version) VALUES (?, ?, ?)`,
      // LIMIT 1: the static columns come with every row of the partition.
      state: `SELECT org_id, updated_at, deleted, revision FROM ${ks}.policies WHERE policy_id = ? LIMIT 1`,
      stateWithDoc: `SELECT org_id, updated_at, deleted, revision, doc FROM ${ks}.policies
                     WHERE policy_id = ? LIMIT 1`,
      versions: `SELECT org_id, version FROM ${ks}.policies WHERE policy_id = ?`,
      writePosition: `INSERT INTO ${ks}.policies_by_org (org_id, updated_at, policy_id) VALUES (?, ?, ?)
                      USING TIMESTAMP ?`,
      removePosition: `DELETE FROM ${ks}.policies_by_org USING TIMESTAMP ?
                       WHERE org_id = ? AND updated_at = ? AND policy_id = ?`,
      firstPositions: `SELECT updated_at, policy_id FROM ${ks}.policies_by_org WHERE org_id = ? LIMIT ?`,
      positionsAfter: `SELECT updated_at, policy_id FROM ${ks}.policies_by_org
                       WHERE org_id = ? AND (updated_at, policy_id) < (?, ?) LIMIT ?`,
      allPositions: `SELECT updated_at, policy_id FROM ${ks}.policies_by_org WHERE org_id = ?`,
    };
  }

  async insert(policy: Policy, version: PolicyVersion): Promise<void> {
    const orgId = requireOrg(policy);
    const at = { updatedAt: policy.updated_at, policyId: policy.id };
    await this.writePosition(orgId, at, 0);
    const rs = await this.client.batch(
      [
        {
          query: this.cql.insertState,
          params: [policy.id, orgId, JSON.stringify(policy), policy.updated_at],
        },
        { query: this.cql.appendVersion, params: [policy.id, 0, JSON.stringify(version)] },
      ],
      this.q.cas,
    );
    if (!rs.wasApplied()) {
      // The row refused carries the state that is there.
      await this.repair(orgId, at, stateOf(rs.first()));
      throw new Error(`policy ${policy.id} exists`);
    }
  }

  async replace(
    policy: Policy,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult> {
    const orgId = requireOrg(policy);
    const before = await this.state(policy.id, false);
    if (!mayWrite(before, orgId, expectedRevision)) return conflict;
    const revision = expectedRevision + 1;
    const at = { updatedAt: policy.updated_at, policyId: policy.id };
    // Where the state read is the one the write replaces, its position is known: nothing to write
    // when it stays, and the old row to remove when it moves. Otherwise (a read behind the
    // expected revision) the new row is written, and readers remove the old one.
    const known = before.revision === expectedRevision;
    const moves = !known || before.updatedAt !== policy.updated_at;
    if (moves) await this.writePosition(orgId, at, revision);
    const rs = await this.client.batch(
      [
        {
          query: this.cql.replaceState,
          params: [
            JSON.stringify(policy),
            policy.updated_at,
            revision,
            policy.id,
            expectedRevision,
            orgId,
          ],
        },
        { query: this.cql.appendVersion, params: [policy.id, revision, JSON.stringify(version)] },
      ],
      this.q.cas,
    );
    if (!rs.wasApplied()) {
      if (moves) await this.repair(orgId, at, await this.state(policy.id, false));
      return conflict;
    }
    if (known && moves) {
      await this.removePosition(orgId, { ...at, updatedAt: before.updatedAt }, revision);
    }
    return { ok: true, revision };
  }

  async markDeleted(
    orgId: string,
    policyId: string,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult> {
    const before = await this.state(policyId, false);
    if (!mayWrite(before, orgId, expectedRevision)) return conflict;
    const revision = expectedRevision + 1;
    const rs = await this.client.batch(
      [
        { query: this.cql.deleteState, params: [revision, policyId, expectedRevision, orgId] },
        { query: this.cql.appendVersion, params: [policyId, revision, JSON.stringify(version)] },
      ],
      this.q.cas,
    );
    if (!rs.wasApplied()) return conflict;
    if (before.revision === expectedRevision) {
      await this.removePosition(orgId, { updatedAt: before.updatedAt, policyId }, revision);
    }
    return { ok: true, revision };
  }

  async get(orgId: string, policyId: string): Promise<Policy | null> {
    const s = await this.state(policyId, true);
    return s && s.orgId === orgId && !s.deleted && s.doc ? (JSON.parse(s.doc) as Policy) : null;
  }

  async getLastState(orgId: string, policyId: string): Promise<StoredPolicy | null> {
    const s = await this.state(policyId, true);
    if (!s || s.orgId !== orgId || !s.doc) return null;
    return { policy: JSON.parse(s.doc) as Policy, deleted: s.deleted, revision: s.revision };
  }

  async list(orgId: string, request: PolicyListRequest): Promise<PolicyPage> {
    const limit = Math.max(0, Math.floor(request.limit));
    if (limit === 0) return { items: [], nextCursor: null };
    // One live policy more than asked for says whether a next page exists.
    const want = limit + 1;
    const found: { policy: Policy; key: PolicyListKey }[] = [];
    let after = request.cursor ? decodePolicyCursor(request.cursor) : null;
    while (found.length < want) {
      const ask = Math.min(want - found.length, INDEX_PAGE);
      const rs = after
        ? await this.client.execute(
            this.cql.positionsAfter,
            [orgId, after[0], after[1], ask],
            this.q.plain,
          )
        : await this.client.execute(this.cql.firstPositions, [orgId, ask], this.q.plain);
      const positions = rs.rows.map(positionOf);
      const states = await this.verify(orgId, positions, true);
      positions.forEach((p, i) => {
        const doc = states[i]?.doc;
        if (doc) found.push({ policy: JSON.parse(doc) as Policy, key: [p.updatedAt, p.policyId] });
      });
      const last = positions.at(-1);
      if (positions.length < ask || !last) break;
      after = [last.updatedAt, last.policyId];
    }
    const items = found.slice(0, limit);
    const last = items.at(-1);
    return {
      items: items.map((f) => f.policy),
      nextCursor: found.length > limit && last ? encodePolicyCursor(last.key) : null,
    };
  }

  async count(orgId: string): Promise<number> {
    let n = 0;
    for await (const rows of readPages(
      this.client,
      this.cql.allPositions,
      [orgId],
      this.q.plain,
      INDEX_PAGE,
    )) {
      const states = await this.verify(orgId, rows.map(positionOf), false);
      n += states.filter((s) => s !== null).length;
    }
    return n;
  }

  async listVersions(orgId: string, policyId: string): Promise<PolicyVersion[]> {
    const versions: PolicyVersion[] = [];
    for await (const rows of readPages(
      this.client,
      this.cql.versions,
      [policyId],
      this.q.plain,
      VERSION_PAGE,
    )) {
      for (const row of rows) {
        if (row.get('org_id') !== orgId) return [];
        const v = row.get('version') as string | null;
        if (v !== null) versions.push(JSON.parse(v) as PolicyVersion);
      }
    }
    return versions;
  }

  private async state(policyId: string, withDoc: boolean): Promise<PolicyState | null> {
    const rs = await this.client.execute(
      withDoc ? this.cql.stateWithDoc : this.cql.state,
      [policyId],
      this.q.plain,
    );
    return stateOf(rs.first());
  }

  /**
   * The state behind each position where it makes the position current (live, this org, this
   * updated_at), null elsewhere; the positions found stale are removed before this returns.
   */
  private async verify(
    orgId: string,
    positions: Position[],
    withDoc: boolean,
  ): Promise<(PolicyState | null)[]> {
    const states = await Promise.all(positions.map((p) => this.state(p.policyId, withDoc)));
    const stale: Promise<void>[] = [];
    const current = positions.map((p, i) => {
      const s = states[i] ?? null;
      if (s && isAt(s, orgId, p.updatedAt)) return s;
      stale.push(this.repair(orgId, p, s));
      return null;
    });
    await Promise.all(stale);
    return current;
  }

  /** Removes a position that `state` shows stale, at the state's revision (see the top). */
  private async repair(orgId: string, at: Position, state: PolicyState | null): Promise<void> {
    if (state === null || isAt(state, orgId, at.updatedAt)) return;
    await this.removePosition(orgId, at, state.revision);
  }

  private async writePosition(orgId: string, at: Position, revision: number): Promise<void> {
    await this.client.execute(
      this.cql.writePosition,
      [orgId, at.updatedAt, at.policyId, revision],
      this.q.plain,
    );
  }

  private async removePosition(orgId: string, at: Position, revision: number): Promise<void> {
    await this.client.execute(
      this.cql.removePosition,
      [revision, orgId, at.updatedAt, at.policyId],
      this.q.plain,
    );
  }
}

function requireOrg(p: Policy): string {
  if (!p.org_id) throw new Error('presets are not stored');
  return p.org_id;
}

function stateOf(row: types.Row | null | undefined): PolicyState | null {
  const orgId = row?.get('org_id') as string | null | undefined;
  if (!row || orgId == null) return null;
  return {
    orgId,
    updatedAt: row.get('updated_at') as string,
    deleted: row.get('deleted') === true,
    revision: row.get('revision') as number,
    doc: (row.get('doc') as string | null | undefined) ?? undefined,
  };
}

function positionOf(row: types.Row): Position {
  return { updatedAt: row.get('updated_at') as string, policyId: row.get('policy_id') as string };
}

/** Whether the row of this position is the policy's current one. */
function isAt(s: PolicyState, orgId: string, updatedAt: string): boolean {
  return s.orgId === orgId && !s.deleted && s.updatedAt === updatedAt;
}

/**
 * False where the state read rules the write out for good: no such policy in this org (the store
 * reads at a consistency that sees finished writes), a delete (final), a revision past the
 * expected one (revisions only grow). A state behind the expected revision proves nothing; the
 * compare-and-set decides.
 */
function mayWrite(
  s: PolicyState | null,
  orgId: string,
  expectedRevision: number,
): s is PolicyState {
  return s !== null && s.orgId === orgId && !s.deleted && s.revision <= expectedRevision;
}
