import { describe, expect, it } from 'vitest';
import { createIdGenerator } from '@guard/platform';
import { exportActivity, type Activity, type Principal } from '@guard/domain';
import { MemoryActivityStore, MemoryOrgStore } from '../memory/index.js';
import { anActivity, seeded } from '@guard/testing';

/**
 * The settled watermark: two API processes record activity whose writes reach the store up to
 * 40 ms after their ids were made, in any order, while a reader tails the export (cursor while
 * there is more, then `since` the last time it saw). With the watermark at least as long as the
 * lag, the reader sees every id exactly once, in order. Without it, it skips late arrivals.
 */

const admin: Principal = {
  org_id: 'org-a',
  org_kind: 'standard',
  user_id: 'u',
  key_id: 'k',
  role: 'admin',
  staff: false,
};

async function tail(settleMs: number, seed: number): Promise<{ made: string[]; seen: string[] }> {
  const store = new MemoryActivityStore();
  let now = Date.parse('2026-11-01T00:00:00Z');
  const deps = {
    activities: store,
    orgs: new MemoryOrgStore(),
    now: () => new Date(now),
    settleMs,
  };
  const random = seeded(seed);
  const processes = [createIdGenerator(), createIdGenerator()];
  const inFlight: { due: number; activity: Activity }[] = [];
  const made: string[] = [];
  const seen: string[] = [];
  let cursor: string | undefined;
  let since: number | undefined;
  const read = async () => {
    const page = await exportActivity(deps, admin, { cursor, since, limit: 3, alarmOnly: false });
    seen.push(...page.activities.map((a) => a.id));
    const last = page.activities.at(-1);
    if (page.has_more) cursor = page.next_cursor!;
    else if (last) {
      cursor = undefined;
      since = Date.parse(last.created_at);
    }
  };
  for (let step = 0; step < 400; step++, now++) {
    for (const make of processes)
      for (let n = Math.floor(random() * 3); n > 0; n--) {
        const id = make(now);
        made.push(id);
        inFlight.push({
          due: now + Math.floor(random() * 40),
          activity: anActivity('org-a', { id, created_at: new Date(now).toISOString() }),
        });
      }
    const arrived = inFlight.filter((f) => f.due <= now);
    await store.record(arrived.sort(() => random() - 0.5).map((f) => f.activity));
    inFlight.splice(0, inFlight.length, ...inFlight.filter((f) => f.due > now));
    await read();
  }
  // Everything arrives; time passes; the reader catches up.
  await store.record(inFlight.map((f) => f.activity));
  now += settleMs + 100;
  for (let i = 0; i < 1000; i++) await read();
  return { made, seen };
}

describe('export under late arrivals', () => {
  it('with the watermark covering the lag, a tailing reader sees every id once, in order', async () => {
    for (const seed of [1, 2, 3]) {
      const { made, seen } = await tail(50, seed);
      expect(seen.length).toBe(made.length);
      expect(seen).toEqual([...made].sort());
    }
  });

  it('without it (settle 0), the same reader misses rows that arrived behind it', async () => {
    const { made, seen } = await tail(0, 1);
    expect(new Set(seen).size).toBeLessThan(made.length);
  });
});
