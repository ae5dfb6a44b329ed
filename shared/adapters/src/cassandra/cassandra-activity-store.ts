import type { Client, types } from 'cassandra-driver';
import type { Activity, ActivityPage, ActivityQuery, ActivityStore } from '@guard/domain';
import { isId } from '@guard/platform';
import { assertKeyspaceName } from './migrate.js';

export interface CassandraActivityStoreOptions {
  /** Where `migrateCassandra` created the tables. */
  keyspace: string;
  /** How long a row lives after it is written; 0 keeps it forever. */
  ttlSeconds: number;
}

const DAY_MS = 86_400_000;
// Cassandra's largest TTL is 20 years.
const MAX_TTL_SECONDS = 20 * 365 * 86_400;
// A day's row in activity_days_by_org outlives the day's activity, so a reader never misses a
// day that still holds rows (the last write of a day sets both TTLs).
const DAY_ROW_EXTRA_TTL_SECONDS = 2 * 86_400;
// Rows of one partition checked and written together: one read and one unlogged batch per
// chunk. The batch is one partition, so one mutation on each replica (Cassandra applies no
// batch-size limit to those). For 10,000 records this wrote 2-3 times faster than the same
// inserts run one by one with up to 128 in flight (cassandra-activity-store.int.test.ts).
const WRITE_CHUNK = 200;
// Chunks in flight at once for one record() call.
const WRITE_CONCURRENCY = 8;
// Rows asked of one partition in one read: bounds what a page with a huge limit holds in memory.
const READ_PAGE = 5_000;
const DAYS_PAGE = 64;
// Above every id (ids are lowercase hex), for reads without an upper bound.
const ID_CEILING = 'g';
const LAST_DAY = Date.UTC(9999, 11, 31) / DAY_MS;

/**
 * Activity on Cassandra, in one partition per org and UTC day (infra/cassandra/001_activity.cql).
 * The day is that of the time in the id, so every read knows its partition from the id bounds,
 * and `activity_days_by_org` says which days hold anything.
 *
 * Idempotent by id, first write wins: `record` reads which ids of a chunk are there already and
 * writes only the others, so redelivered activity neither replaces the stored record nor
 * renews its TTL. Two writers racing on one id with different contents could both write (the
 * last wins); ids are made once, at the edge, so the contents of one id do not differ.
 */
export class CassandraActivityStore implements ActivityStore {
  private readonly client: Client;
  private readonly ttl: number;
  private readonly dayTtl: number;
  private readonly cql: {
    insertActivity: string;
    insertAlarm: string;
    insertDay: string;
    insertAlarmDay: string;
    existing: string;
    readActivity: string;
    readAlarms: string;
    readDays: string;
    get: string;
  };

  constructor(client: Client, options: CassandraActivityStoreOptions) {
    const { keyspace, ttlSeconds } = options;
    assertKeyspaceName(keyspace);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 0 || ttlSeconds > MAX_TTL_SECONDS) {
      throw new Error(`ttlSeconds must be an integer from 0 to ${MAX_TTL_SECONDS}`);
    }
    this.client = client;
    this.ttl = ttlSeconds;
    this.dayTtl = ttlSeconds === 0 ? 0 : ttlSeconds + DAY_ROW_EXTRA_TTL_SECONDS;
    const insert = (table: string) =>
      `INSERT INTO ${keyspace}.${table} (org_id, day, id, alarm, created_ms, doc) VALUES (?, ?, ?, ?, ?, ?) USING TTL ?`;
    const read = (table: string) =>
      `SELECT id, created_ms, doc FROM ${keyspace}.${table}
       WHERE org_id = ? AND day = ? AND id > ? AND id < ? LIMIT ?`;
    this.cql = {
      insertActivity: insert('activity_by_org_day'),
      insertAlarm: insert('alarms_by_org_day'),
      insertDay: `INSERT INTO ${keyspace}.activity_days_by_org (org_id, day) VALUES (?, ?) USING TTL ?`,
      insertAlarmDay: `INSERT INTO ${keyspace}.activity_days_by_org (org_id, day, alarm) VALUES (?, ?, true) USING TTL ?`,
      existing: `SELECT id FROM ${keyspace}.activity_by_org_day WHERE org_id = ? AND day = ? AND id IN ?`,
      readActivity: read('activity_by_org_day'),
      readAlarms: read('alarms_by_org_day'),
      readDays: `SELECT day, alarm FROM ${keyspace}.activity_days_by_org
                 WHERE org_id = ? AND day >= ? AND day <= ? LIMIT ${DAYS_PAGE}`,
      get: `SELECT doc FROM ${keyspace}.activity_by_org_day WHERE org_id = ? AND day = ? AND id = ?`,
    };
  }

  async record(activities: Activity[]): Promise<void> {
    const partitions = new Map<string, { orgId: string; day: string; rows: Activity[] }>();
    const seen = new Set<string>();
    for (const a of activities) {
      if (!isId(a.id)) throw new Error(`activity id "${a.id}" is not a 24-character hex id`);
      const day = dayOfId(a.id);
      // First of an id wins within one call too.
      if (seen.has(`${a.org_id}\n${a.id}`)) continue;
      seen.add(`${a.org_id}\n${a.id}`);
      const key = `${a.org_id}\n${day}`;
      let p = partitions.get(key);
      if (!p) partitions.set(key, (p = { orgId: a.org_id, day, rows: [] }));
      p.rows.push(a);
    }
    // A day row is written before the first of its day's rows that is new, since a reader finds
    // a day's rows only through it; it is not rewritten for redelivered rows, whose TTL it
    // must outlive.
    const dayRows = new Map<string, Promise<unknown>>();
    const chunks: { key: string; orgId: string; day: string; rows: Activity[] }[] = [];
    for (const [key, p] of partitions) {
      for (let i = 0; i < p.rows.length; i += WRITE_CHUNK) {
        chunks.push({ key, ...p, rows: p.rows.slice(i, i + WRITE_CHUNK) });
      }
    }
    await forEachLimited(chunks, WRITE_CONCURRENCY, (c) =>
      this.writeChunk(c.orgId, c.day, c.rows, () => {
        let written = dayRows.get(c.key);
        if (!written) {
          const alarm = partitions.get(c.key)!.rows.some((a) => a.alarm);
          written = this.client.execute(
            alarm ? this.cql.insertAlarmDay : this.cql.insertDay,
            [c.orgId, c.day, this.dayTtl],
            { prepare: true },
          );
          dayRows.set(c.key, written);
        }
        return written;
      }),
    );
  }

  private async writeChunk(
    orgId: string,
    day: string,
    rows: Activity[],
    writeDay: () => Promise<unknown>,
  ): Promise<void> {
    const existing = await this.client.execute(
      this.cql.existing,
      [orgId, day, rows.map((a) => a.id)],
      { prepare: true, fetchSize: WRITE_CHUNK },
    );
    const stored = new Set(existing.rows.map((r) => r.get('id') as string));
    const queries: { query: string; params: unknown[] }[] = [];
    for (const a of rows) {
      if (stored.has(a.id)) continue;
      const params = [
        orgId,
        day,
        a.id,
        a.alarm,
        Date.parse(a.created_at),
        JSON.stringify(a),
        this.ttl,
      ];
      // The alarm row and the activity row share a partition key: one mutation, so the
      // activity row (what the check above reads) never exists without its alarm row.
      if (a.alarm) queries.push({ query: this.cql.insertAlarm, params });
      queries.push({ query: this.cql.insertActivity, params });
    }
    if (queries.length === 0) return;
    await writeDay();
    await this.client.batch(queries, { prepare: true, logged: false });
  }

  async list(orgId: string, q: ActivityQuery): Promise<ActivityPage> {
    const limit = Math.max(0, Math.floor(q.limit));
    const lower = q.after || '';
    const upper = q.before || ID_CEILING;
    // `since`/`until` bound created_at, which need not be the time in the id, so they filter
    // the rows read and narrow nothing: callers that can give id bounds (the export) do.
    const filtered = q.since !== undefined || q.until !== undefined;
    const keep = (createdMs: number) =>
      (q.since === undefined || createdMs > q.since) &&
      (q.until === undefined || createdMs < q.until);
    const items: Activity[] = [];
    const want = limit + 1;
    if (lower >= upper) return { items, has_more: false };

    const firstDay = boundDay(lower) ?? 0;
    const lastDay = boundDay(upper) ?? LAST_DAY;
    const read = q.alarmOnly ? this.cql.readAlarms : this.cql.readActivity;
    days: for await (const day of this.days(orgId, firstDay, lastDay, q.alarmOnly === true)) {
      let from = lower;
      for (;;) {
        const ask = Math.min(want - items.length, READ_PAGE);
        const rs = await this.client.execute(read, [orgId, day, from, upper, ask], {
          prepare: true,
          fetchSize: ask,
        });
        for (const row of rs.rows) {
          from = row.get('id') as string;
          if (filtered && !keep((row.get('created_ms') as types.Long).toNumber())) continue;
          items.push(JSON.parse(row.get('doc') as string) as Activity);
        }
        if (items.length >= want) break days;
        if (rs.rows.length < ask) break;
      }
    }
    return { items: items.slice(0, limit), has_more: items.length > limit };
  }

  async get(orgId: string, id: string): Promise<Activity | null> {
    if (!isId(id)) return null;
    const rs = await this.client.execute(this.cql.get, [orgId, dayOfId(id), id], {
      prepare: true,
    });
    const doc = rs.first()?.get('doc') as string | undefined;
    return doc === undefined ? null : (JSON.parse(doc) as Activity);
  }

  /** The days from `first` to `last` (epoch days) that hold the org's activity, in order. */
  private async *days(
    orgId: string,
    first: number,
    last: number,
    alarmOnly: boolean,
  ): AsyncGenerator<string> {
    let from = first;
    while (from <= last) {
      const rs = await this.client.execute(
        this.cql.readDays,
        [orgId, dayString(from), dayString(last)],
        { prepare: true },
      );
      for (const row of rs.rows) {
        const day = String(row.get('day'));
        from = Date.parse(day) / DAY_MS + 1;
        if (!alarmOnly || row.get('alarm') === true) yield day;
      }
      if (rs.rows.length < DAYS_PAGE) return;
    }
  }
}

/** The UTC day of the time in an id: its partition. */
function dayOfId(id: string): string {
  return dayString(dayOfSeconds(parseInt(id.slice(0, 8), 16)));
}

function dayOfSeconds(seconds: number): number {
  return Math.floor(seconds / 86_400);
}

function dayString(epochDay: number): string {
  return new Date(epochDay * DAY_MS).toISOString().slice(0, 10);
}

/** The day an id bound falls in, when it starts with an id's seconds. */
function boundDay(bound: string): number | undefined {
  return /^[0-9a-f]{8}/.test(bound) ? dayOfSeconds(parseInt(bound.slice(0, 8), 16)) : undefined;
}

async function forEachLimited<T>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
