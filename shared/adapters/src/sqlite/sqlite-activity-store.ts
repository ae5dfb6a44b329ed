import type { Activity, ActivityPage, ActivityQuery, ActivityStore } from '@guard/domain';
import type { SqliteDb } from './sqlite-database.js';

type ListStatement = ReturnType<SqliteDb['prepare']> & {
  all(...args: (string | number)[]): { doc: string }[];
};

export class SqliteActivityStore implements ActivityStore {
  private readonly insert;
  private readonly getStmt;
  private readonly db: SqliteDb;
  private readonly listStatements = new Map<string, ListStatement>();

  constructor(db: SqliteDb) {
    this.db = db;
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO activities (org_id, id, created_ms, alarm, doc) VALUES (?, ?, ?, ?, ?)',
    );
    this.getStmt = db.prepare<[string, string], { doc: string }>(
      'SELECT doc FROM activities WHERE org_id = ? AND id = ?',
    );
  }

  async record(activities: Activity[]): Promise<void> {
    if (activities.length === 0) return;
    this.db.transaction(() => {
      for (const a of activities) {
        this.insert.run(
          a.org_id,
          a.id,
          Date.parse(a.created_at),
          a.alarm ? 1 : 0,
          JSON.stringify(a),
        );
      }
    })();
  }

  async list(orgId: string, q: ActivityQuery): Promise<ActivityPage> {
    const where = ['org_id = ?'];
    const args: (string | number)[] = [orgId];
    if (q.alarmOnly) where.push('alarm = 1');
    if (q.after) {
      where.push('id > ?');
      args.push(q.after);
    }
    if (q.before) {
      where.push('id < ?');
      args.push(q.before);
    }
    if (q.since !== undefined) {
      where.push('created_ms > ?');
      args.push(q.since);
    }
    if (q.until !== undefined) {
      where.push('created_ms < ?');
      args.push(q.until);
    }
    args.push(q.limit + 1);
    // One range of (org_id, id), or of (org_id, alarm, id) for alarms: a page costs the same on a
    // table of any size. Statements are prepared once per shape of query.
    const sql = `SELECT doc FROM activities WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`;
    let stmt = this.listStatements.get(sql);
    if (!stmt)
      this.listStatements.set(
        sql,
        (stmt = this.db.prepare<(string | number)[], { doc: string }>(sql)),
      );
    const rows = stmt.all(...args);
    const has_more = rows.length > q.limit;
    return { items: rows.slice(0, q.limit).map((r) => JSON.parse(r.doc) as Activity), has_more };
  }

  /**
   * Retention: deletes activity recorded before `cutoffMs`, `chunk` rows per transaction so that
   * writers are never held up for long. Returns how many rows went.
   */
  deleteRecordedBefore(cutoffMs: number, chunk = 5000): number {
    const del = this.db.prepare<[number, number]>(
      'DELETE FROM activities WHERE (org_id, id) IN (SELECT org_id, id FROM activities WHERE created_ms < ? LIMIT ?)',
    );
    let total = 0;
    for (;;) {
      const n = del.run(cutoffMs, chunk).changes;
      total += n;
      if (n < chunk) return total;
    }
  }

  async get(orgId: string, id: string): Promise<Activity | null> {
    const row = this.getStmt.get(orgId, id);
    return row ? (JSON.parse(row.doc) as Activity) : null;
  }
}
