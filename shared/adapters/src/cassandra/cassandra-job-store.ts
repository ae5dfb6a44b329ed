import { types, type Client, type QueryOptions } from 'cassandra-driver';
import {
  claimedJob,
  isFinished,
  type JobPatch,
  type JobRecord,
  type JobSpec,
  type JobState,
  type JobStatus,
  type JobStore,
} from '@guard/domain';
import {
  configQueryOptions,
  readPages,
  type CassandraConfigStoreOptions,
  type ConfigQueryOptions,
} from './cassandra-config-options.js';

/*
 * Jobs on Cassandra (infra/cassandra/003_jobs.cql, docs/cassandra.md), shared by the API pods of
 * distributed mode.
 *
 * `jobs` holds one row per job. `create` is `INSERT ... IF NOT EXISTS`, whose refusal carries the
 * stored row. Every later write reads the row, computes the next state from it and writes it
 * `IF revision = <the revision read>` with the revision one higher: a patch, or a lease. A
 * compare-and-set can hold only one list of conditions (no OR), while a claim is allowed in four
 * cases (free, held by the claimer, lapsed, forced) and must count an attempt from the count it
 * read; the revision pins all of that at once. A write refused because another landed in between
 * reads again (linearizably) and decides again: a claimer that lost to another now finds the
 * lease held and gives up, an update applies its patch to the newer state. So of claimers racing
 * for one lapsed lease exactly one wins, and a progress update and a lease renewal at the same
 * moment both land.
 *
 * `unfinished_jobs` (one partition, ordered by created_at then id) lists the queued and running
 * jobs for `listUnfinished`. It cannot change together with `jobs` (another partition), so it is
 * never trusted: a row counts only while the job is unfinished and has that created_at. A job
 * that is unfinished always has its row: `create` writes the row before the job, an update that
 * makes a finished job unfinished again writes it before its compare-and-set, and one that
 * finishes a job removes it after. A crash between the steps leaves an extra row, which readers
 * skip and remove, never a missing one. Rows are written and removed `USING TIMESTAMP` = the
 * revision of the job they are for (as policies_by_org is): a removal at revision k hides only
 * rows written for revision k or earlier, and a job that is unfinished at revision m got its row
 * from the write that last made it unfinished, after every state it was finished in, so no
 * removal (by a finisher, or by a reader that saw an older finished state) reaches it. A row
 * whose job is not there yet is kept: a create may be between its two writes.
 */

const SCOPE = 'all';
/** Rows of `unfinished_jobs` read at once; their jobs are then read in parallel. */
const PAGE = 100;
/**
 * Compare-and-sets tried before a write gives up. Each refusal means another write landed, and a
 * job has few writers (its runner's updates and lease renewals), so this is never reached unless
 * something writes the job in a loop.
 */
const MAX_TRIES = 20;
const COLUMNS =
  'id, org_id, kind, input, created_at, status, state, attempts, lease_owner, lease_until, revision';

/** The fields of a job's state stored as JSON in `state`; status has its own column. */
type StateDoc = Omit<JobState, 'status'>;

interface Stored {
  job: JobRecord;
  revision: number;
}

/** A compare-and-set a write decided on, with what it answers once applied. */
interface Plan {
  query: string;
  params: unknown[];
  next: JobRecord;
  before?: () => Promise<void>;
  after?: () => Promise<void>;
}

export class CassandraJobStore implements JobStore {
  private readonly client: Client;
  private readonly q: ConfigQueryOptions;
  /** Reads that see every compare-and-set decided before them, for a write that was refused. */
  private readonly linearizable: QueryOptions;
  private readonly cql: {
    insert: string;
    get: string;
    setState: string;
    setLease: string;
    addUnfinished: string;
    removeUnfinished: string;
    unfinished: string;
  };

  constructor(client: Client, options: CassandraConfigStoreOptions) {
    this.client = client;
    this.q = configQueryOptions(options);
    this.linearizable = {
      ...this.q.plain,
      consistency: this.q.cas.serialConsistency ?? types.consistencies.serial,
    };
    const ks = this.q.keyspace;
    this.cql = {
      insert: `INSERT INTO ${ks}.jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0) IF NOT EXISTS`,
      get: `SELECT ${COLUMNS} FROM ${ks}.jobs WHERE id = ?`,
      setState: `UPDATE ${ks}.jobs SET status = ?, state = ?, revision = ? WHERE id = ? IF revision = ?`,
      setLease: `UPDATE ${ks}.jobs SET attempts = ?, lease_owner = ?, lease_until = ?, revision = ?
                 WHERE id = ? IF revision = ?`,
      addUnfinished: `INSERT INTO ${ks}.unfinished_jobs (scope, created_at, id) VALUES (?, ?, ?)
                      USING TIMESTAMP ?`,
      removeUnfinished: `DELETE FROM ${ks}.unfinished_jobs USING TIMESTAMP ?
                         WHERE scope = ? AND created_at = ? AND id = ?`,
      unfinished: `SELECT created_at, id FROM ${ks}.unfinished_jobs WHERE scope = ?`,
    };
  }

  async create(job: JobRecord): Promise<{ job: JobRecord; created: boolean }> {
    if (!isFinished(job.status)) await this.addUnfinished(job, 0);
    const rs = await this.client.execute(
      this.cql.insert,
      [
        job.id,
        job.org_id,
        job.kind,
        JSON.stringify(job.input),
        job.created_at,
        job.status,
        JSON.stringify(stateDoc(job)),
        job.attempts,
        // Unset rather than null: a null would write a tombstone for nothing.
        job.lease_owner ?? undefined,
        job.lease_until === null ? undefined : types.Long.fromNumber(job.lease_until),
      ],
      this.q.cas,
    );
    if (rs.wasApplied()) return { job, created: true };
    // The refusal carries the row that is there.
    const stored = storedOf(rs.first());
    if (!stored) throw new Error(`job ${job.id}: create refused, but no job came back`);
    // Only the stored created_at is ever valid for this id: the row written above for another
    // one points nowhere.
    if (!isFinished(job.status) && job.created_at !== stored.job.created_at) {
      await this.removeUnfinished(job, stored.revision);
    }
    return { job: stored.job, created: false };
  }

  async get(id: string): Promise<JobRecord | null> {
    return (await this.read(id, false))?.job ?? null;
  }

  async update(id: string, patch: JobPatch): Promise<JobRecord | null> {
    return this.compareAndSet(id, ({ job, revision }) => {
      const next: JobRecord = { ...job, ...patch };
      const at = revision + 1;
      const reopens = isFinished(job.status) && !isFinished(next.status);
      const finishes = !isFinished(job.status) && isFinished(next.status);
      return {
        query: this.cql.setState,
        params: [next.status, JSON.stringify(stateDoc(next)), at, id, revision],
        next,
        before: reopens ? () => this.addUnfinished(next, at) : undefined,
        after: finishes ? () => this.removeUnfinished(next, at) : undefined,
      };
    });
  }

  async claim(
    id: string,
    owner: string,
    nowMs: number,
    leaseMs: number,
    force = false,
  ): Promise<JobRecord | null> {
    return this.compareAndSet(id, ({ job, revision }) => {
      const next = claimedJob(job, owner, nowMs, leaseMs, force);
      if (!next) return null;
      return {
        query: this.cql.setLease,
        params: [
          next.attempts,
          owner,
          types.Long.fromNumber(nowMs + leaseMs),
          revision + 1,
          id,
          revision,
        ],
        next,
      };
    });
  }

  async listUnfinished(): Promise<JobRecord[]> {
    const jobs: JobRecord[] = [];
    for await (const rows of readPages(
      this.client,
      this.cql.unfinished,
      [SCOPE],
      this.q.plain,
      PAGE,
    )) {
      const stored = await Promise.all(rows.map((r) => this.read(r.get('id') as string, false)));
      const stale: Promise<void>[] = [];
      rows.forEach((row, i) => {
        const s = stored[i];
        // No job yet: a create between its two writes (or one that died there). Kept.
        if (!s) return;
        const createdAt = row.get('created_at') as string;
        if (!isFinished(s.job.status) && s.job.created_at === createdAt) jobs.push(s.job);
        else stale.push(this.removeUnfinished({ id: s.job.id, created_at: createdAt }, s.revision));
      });
      await Promise.all(stale);
    }
    return jobs;
  }

  /**
   * Reads the job and writes what `plan` decides from it, if anything, as a compare-and-set on
   * the revision read; reads and decides again when another write landed in between. Answers the
   * job as written, or null where the job is unknown or `plan` decided on no write.
   */
  private async compareAndSet(
    id: string,
    plan: (stored: Stored) => Plan | null,
  ): Promise<JobRecord | null> {
    for (let tried = 0; tried < MAX_TRIES; tried++) {
      // The first read may miss a compare-and-set still being committed (its refusal says so);
      // after a refusal, read linearizably so as not to be refused again for the same write.
      const stored = await this.read(id, tried > 0);
      if (!stored) return null;
      const p = plan(stored);
      if (!p) return null;
      await p.before?.();
      const rs = await this.client.execute(p.query, p.params, this.q.cas);
      if (rs.wasApplied()) {
        await p.after?.();
        return p.next;
      }
      // Spread out writers that keep meeting each other.
      await new Promise((r) => setTimeout(r, Math.random() * 5 * tried));
    }
    throw new Error(`job ${id}: gave up after ${MAX_TRIES} writes refused for writes in between`);
  }

  private async read(id: string, linearizable: boolean): Promise<Stored | null> {
    const rs = await this.client.execute(
      this.cql.get,
      [id],
      linearizable ? this.linearizable : this.q.plain,
    );
    return storedOf(rs.first());
  }

  private async addUnfinished(job: Pick<JobRecord, 'id' | 'created_at'>, at: number) {
    await this.client.execute(
      this.cql.addUnfinished,
      [SCOPE, job.created_at, job.id, at],
      this.q.plain,
    );
  }

  private async removeUnfinished(job: Pick<JobRecord, 'id' | 'created_at'>, at: number) {
    await this.client.execute(
      this.cql.removeUnfinished,
      [at, SCOPE, job.created_at, job.id],
      this.q.plain,
    );
  }
}

function stateDoc(job: JobRecord): StateDoc {
  return {
    progress: job.progress,
    checkpoint: job.checkpoint,
    result: job.result,
    error: job.error,
    started_at: job.started_at,
    finished_at: job.finished_at,
  };
}

function storedOf(row: types.Row | null | undefined): Stored | null {
  const revision = row?.get('revision') as number | null | undefined;
  if (!row || revision == null) return null;
  const spec = {
    kind: row.get('kind') as JobSpec['kind'],
    input: JSON.parse(row.get('input') as string) as JobSpec['input'],
  } as JobSpec;
  const leaseUntil = row.get('lease_until') as types.Long | null;
  const job: JobRecord = {
    ...spec,
    ...(JSON.parse(row.get('state') as string) as StateDoc),
    id: row.get('id') as string,
    org_id: row.get('org_id') as string,
    created_at: row.get('created_at') as string,
    status: row.get('status') as JobStatus,
    attempts: row.get('attempts') as number,
    lease_owner: (row.get('lease_owner') as string | null) ?? null,
    lease_until: leaseUntil === null ? null : leaseUntil.toNumber(),
  };
  return { job, revision };
}
