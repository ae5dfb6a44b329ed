import type { Activity, ActivityPage, ActivityQuery, ActivityStore } from '@guard/domain';
import type { SqliteDb } from './sqlite-database.js';

export class SqliteActivityStore implements ActivityStore {
  private readonly insert;
  private readonly getStmt;
  private readonly db: SqliteDb;

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
    if (q.after) {
      where.push('id > ?');
      args.push(q.after);
    }
    if (q.since !== undefined) {
      where.push('created_ms > ?');
      args.push(q.since);
    }
    if (q.until !== undefined) {
      where.push('created_ms < ?');
      args.push(q.until);
    }
    if (q.alarmOnly) where.push('alarm = 1');
    args.push(q.limit + 1);
    const rows = this.db
      .prepare<(string | number)[], { doc: string }>(
        `SELECT doc FROM activities WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`,
      )
      .all(...args);
    const has_more = rows.length > q.limit;
    return { items: rows.slice(0, q.limit).map((r) => JSON.parse(r.doc) as Activity), has_more };
  }

  async get(orgId: string, id: string): Promise<Activity | null> {
    const row = this.getStmt.get(orgId, id);
    return row ? (JSON.parse(row.doc) as Activity) : null;
  }
}
