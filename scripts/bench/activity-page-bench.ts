/**
 * Whether an export page costs the same however big the embedded activity table grows: the
 * SQLite store is filled to 10,000, 100,000 and 1,000,000 rows (3 orgs, 10% alarms), and pages of
 * 1,000 are read, through the export verb, at the start, the middle and the end of one org's
 * range, and for alarms only. Prints the median time per page at each size.
 *
 *   npm run bench:activity-pages -- [--max 1000000]
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { exportActivity, type Principal } from '@guard/domain';
import { createIdGenerator, idTime } from '@guard/platform';
import { openSqlite, SqliteActivityStore, SqliteOrgStore } from '@guard/adapters';
import { aRecordedActivity } from '@guard/testing/recorded-activity';

const { values } = parseArgs({ options: { max: { type: 'string', default: '1000000' } } });
const MAX = Number(values.max);
const SIZES = [10_000, 100_000, 1_000_000].filter((n) => n <= MAX);
const ORGS = ['org-a', 'org-b', 'org-c'];
const admin = (org: string): Principal => ({
  org_id: org,
  org_kind: 'standard',
  user_id: 'u',
  key_id: 'k',
  role: 'admin',
  staff: false,
});

const dir = mkdtempSync(path.join(os.tmpdir(), 'guard-page-bench-'));
const db = openSqlite(path.join(dir, 'pages.db'));
const store = new SqliteActivityStore(db);
const deps = {
  activities: store,
  orgs: new SqliteOrgStore(db),
  now: () => new Date(Date.now() + 86_400_000),
  settleMs: 0,
};
const gen = createIdGenerator();
const start = Date.parse('2026-01-01T00:00:00Z');
const ids: string[][] = [[], [], []];
let made = 0;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function fillTo(n: number): Promise<void> {
  while (made < n) {
    const batch = [];
    for (let i = 0; i < 5000 && made < n; i++, made++) {
      const org = made % 3;
      const id = gen(start + made * 10);
      ids[org]!.push(id);
      batch.push(
        aRecordedActivity(ORGS[org]!, made, {
          id,
          created_at: idTime(id).toISOString(),
          alarm: made % 10 === 0,
        }),
      );
    }
    await store.record(batch);
  }
}

async function pageMs(org: number, at: number, alarmOnly: boolean): Promise<number> {
  const list = ids[org]!;
  const since = at === 0 ? undefined : idTime(list[Math.min(list.length - 1, at)]!).getTime();
  const times: number[] = [];
  for (let r = 0; r < 15; r++) {
    const t0 = performance.now();
    const page = await exportActivity(deps, admin(ORGS[org]!), { since, limit: 1000, alarmOnly });
    times.push(performance.now() - t0);
    if (page.activities.length === 0) throw new Error('empty page');
  }
  return median(times);
}

console.log(
  'rows       | page @start | page @middle | page @end-1000 | alarms @middle  (ms per page of 1,000, median of 15)',
);
for (const n of SIZES) {
  const t0 = performance.now();
  await fillTo(n);
  const fill = (performance.now() - t0) / 1000;
  const per = ids[0]!.length;
  const row = [
    await pageMs(0, 0, false),
    await pageMs(0, Math.floor(per / 2), false),
    await pageMs(0, per - 1001, false),
    await pageMs(0, Math.floor(per / 2), true),
  ];
  console.log(
    `${n.toLocaleString('en-US').padEnd(10)} | ${row.map((x) => x.toFixed(2).padStart(11)).join(' | ')}   (filled in ${fill.toFixed(1)} s)`,
  );
}
db.close();
rmSync(dir, { recursive: true, force: true });
