import { claimedJob, type JobPatch, type JobRecord, type JobStore } from '@guard/domain';
import type { SqliteDb } from './sqlite-database.js';

interface Row {
  doc: string;
}

/**
 * Jobs in the embedded database. The record is one JSON document; status and the lease are also
 * columns, so that claiming is one conditional write shared safely by every worker process on
 * the file. Each change is one transaction (read, patch, write), so writers never lose each
 * other's fields.
 */
export class SqliteJobStore implements JobStore {
  private readonly insert;
  private readonly select;
  private readonly write;
  private readonly unfinished;

  constructor(private readonly db: SqliteDb) {
    this.insert = db.prepare<[string, string, string, string, string]>(
      'INSERT OR IGNORE INTO jobs (id, org_id, status, created_at, doc) VALUES (?, ?, ?, ?, ?)',
    );
    this.select = db.prepare<[string], Row>('SELECT doc FROM jobs WHERE id = ?');
    this.write = db.prepare<[string, string | null, number | null, string, string]>(
      'UPDATE jobs SET status = ?, lease_owner = ?, lease_until = ?, doc = ? WHERE id = ?',
    );
    this.unfinished = db.prepare<[], Row>(
      "SELECT doc FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at, id",
    );
  }

  private read(id: string): JobRecord | null {
    const row = this.select.get(id);
    return row ? (JSON.parse(row.doc) as JobRecord) : null;
  }

  private save(job: JobRecord): void {
    this.write.run(job.status, job.lease_owner, job.lease_until, JSON.stringify(job), job.id);
  }

  async create(job: JobRecord): Promise<{ job: JobRecord; created: boolean }> {
    return this.db.transaction(() => {
      const r = this.insert.run(
        job.id,
        job.org_id,
        job.status,
        job.created_at,
        JSON.stringify(job),
      );
      if (r.changes === 1) return { job, created: true };
      return { job: this.read(job.id) ?? job, created: false };
    })();
  }

  async get(id: string): Promise<JobRecord | null> {
    return this.read(id);
  }

  async update(id: string, patch: JobPatch): Promise<JobRecord | null> {
    return this.db.transaction(() => {
      const job = this.read(id);
      if (!job) return null;
      const next: JobRecord = { ...job, ...patch };
      this.save(next);
      return next;
    })();
  }

  async claim(
    id: string,
    owner: string,
    nowMs: number,
    leaseMs: number,
    force = false,
  ): Promise<JobRecord | null> {
    // IMMEDIATE: two processes claiming the same job serialise on the write lock before reading.
    return this.db
      .transaction(() => {
        const job = this.read(id);
        const next = job ? claimedJob(job, owner, nowMs, leaseMs, force) : null;
        if (!next) return null;
        this.save(next);
        return next;
      })
      .immediate();
  }

  async listUnfinished(): Promise<JobRecord[]> {
    return this.unfinished.all().map((r) => JSON.parse(r.doc) as JobRecord);
  }
}
