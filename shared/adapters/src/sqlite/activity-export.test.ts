import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  exportActivity,
  type Activity,
  type ActivityExportDeps,
  type ActivityExportQuery,
  type Principal,
} from '@guard/domain';
import { createIdGenerator } from '@guard/platform';
import { anActivity } from '@guard/testing';
import { openSqlite } from './sqlite-database.js';
import { SqliteActivityStore } from './sqlite-activity-store.js';
import { SqliteOrgStore } from './sqlite-org-store.js';

/**
 * Export correctness on the SQLite store through the export verb: 50,000 activities of 3
 * organizations over several days, written by two "processes" in an arrival order that is not id
 * order, paged with limits 1, 7, 1000 and 10000. Each organization's pages must concatenate to
 * exactly its activities in id order, with no duplicate and no gap; time bounds and alarm_only
 * are checked against a reference filter over random queries.
 */

const ORGS = ['org-a', 'org-b', 'org-c'];
const DAY = 86_400_000;
const base = Date.parse('2026-10-01T00:00:00Z');
const admin = (org: string): Principal => ({
  org_id: org,
  org_kind: 'standard',
  user_id: 'u',
  key_id: 'k',
  role: 'admin',
  staff: false,
});

function seed(): { deps: ActivityExportDeps; byOrg: Map<string, Activity[]> } {
  const db = openSqlite(':memory:');
  const store = new SqliteActivityStore(db);
  const procs = [createIdGenerator(), createIdGenerator()];
  const all: Activity[] = [];
  // 50,000 activities over 5 days: bursts (several in one millisecond) and quiet hours.
  let t = base;
  for (let i = 0; i < 50_000; i++) {
    t += i % 97 === 0 ? 3_600_000 : i % 5;
    const at = new Date(Math.min(t, base + 5 * DAY));
    all.push(
      anActivity(ORGS[(i * 7) % 3]!, {
        id: procs[i % 2]!(at.getTime()),
        created_at: at.toISOString(),
        alarm: i % 11 === 0,
      }),
    );
  }
  // Arrival is not id order: blocks of 500 shuffled by a fixed permutation.
  const order = all.map((_, i) => i).sort((a, b) => ((a * 7919) % 50_021) - ((b * 7919) % 50_021));
  for (let i = 0; i < order.length; i += 500)
    void store.record(order.slice(i, i + 500).map((k) => all[k]!));
  const byOrg = new Map(
    ORGS.map((o) => [o, all.filter((a) => a.org_id === o).sort((x, y) => (x.id < y.id ? -1 : 1))]),
  );
  return {
    deps: {
      activities: store,
      orgs: new SqliteOrgStore(db),
      now: () => new Date(base + 30 * DAY),
      settleMs: 2000,
    },
    byOrg,
  };
}

async function pageAll(
  deps: ActivityExportDeps,
  org: string,
  q: Omit<ActivityExportQuery, 'cursor'>,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await exportActivity(deps, admin(org), { ...q, cursor });
    expect(page.activities.length).toBeLessThanOrEqual(q.limit);
    for (const a of page.activities) {
      expect(a.org_id).toBe(org);
      seen.push(a.id);
    }
    if (!page.has_more) {
      expect(page.next_cursor).toBeNull();
      return seen;
    }
    expect(page.activities).toHaveLength(q.limit);
    cursor = page.next_cursor!;
  }
}

describe('activity export over 50,000 activities (SQLite)', () => {
  const { deps, byOrg } = seed();

  it.each([1, 7, 1000, 10_000])(
    'pages with limit %i concatenate to exactly each org’s activities, in order',
    async (limit) => {
      for (const org of ORGS) {
        const expected = byOrg.get(org)!.map((a) => a.id);
        const seen = await pageAll(deps, org, { limit, alarmOnly: false });
        expect(seen.length).toBe(expected.length);
        expect(seen).toEqual(expected);
      }
    },
    120_000,
  );

  it('since, until and alarm_only match a reference filter', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ORGS),
        fc.option(fc.integer({ min: base - DAY, max: base + 6 * DAY }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 3 * DAY }), { nil: undefined }),
        fc.boolean(),
        fc.constantFrom(7, 1000, 10_000),
        async (org, since, span, alarmOnly, limit) => {
          const until =
            since !== undefined && span !== undefined
              ? since + span
              : span !== undefined
                ? base + span
                : undefined;
          const expected = byOrg
            .get(org)!
            .filter((a) => {
              const t = Date.parse(a.created_at);
              return (
                (since === undefined || t > since) &&
                (until === undefined || t < until) &&
                (!alarmOnly || a.alarm)
              );
            })
            .map((a) => a.id);
          expect(await pageAll(deps, org, { since, until, alarmOnly, limit })).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});

describe('activity retention (SQLite)', () => {
  it('deletes only what was recorded before the cutoff, in chunks', async () => {
    const store = new SqliteActivityStore(openSqlite(':memory:'));
    const gen = createIdGenerator();
    const made = Array.from({ length: 12_000 }, (_, i) => {
      const at = base + i * 60_000;
      return anActivity(ORGS[i % 3]!, { id: gen(at), created_at: new Date(at).toISOString() });
    });
    await store.record(made);
    const cutoff = base + 7_000 * 60_000;
    expect(store.deleteRecordedBefore(cutoff, 1000)).toBe(7_000);
    const left: string[] = [];
    for (const org of ORGS)
      left.push(...(await store.list(org, { limit: 100_000 })).items.map((a) => a.id));
    expect(left.sort()).toEqual(
      made
        .slice(7_000)
        .map((a) => a.id)
        .sort(),
    );
    expect(store.deleteRecordedBefore(cutoff)).toBe(0);
  });
});
