import { describe, expect, it } from 'vitest';
import type { Activity, ActivityStore } from '@guard/domain';
import { createIdGenerator } from '@guard/platform';
import { anActivity } from './builders.js';
import { seeded, shuffle } from './seeded.js';

export function activityStoreContract(
  name: string,
  make: () => Promise<ActivityStore> | ActivityStore,
): void {
  describe(`ActivityStore contract: ${name}`, () => {
    it('records idempotently and reads back within the org only', async () => {
      const store = await make();
      const a = anActivity('org-a', {
        metadata: { k: 'v' },
        pre_analysis: { violation: 0.9, violated_rules: [1] },
      });
      await store.record([a]);
      await store.record([a, { ...a, input_excerpt: 'changed' }]);
      expect(await store.get('org-a', a.id)).toEqual(a);
      expect(await store.get('org-b', a.id)).toBeNull();
      expect((await store.list('org-a', { limit: 10 })).items).toEqual([a]);
      expect((await store.list('org-b', { limit: 10 })).items).toEqual([]);
    });

    it('pages oldest first by cursor, with has_more', async () => {
      const store = await make();
      const base = Date.parse('2026-06-01T00:00:00Z');
      const all = Array.from({ length: 7 }, (_, i) =>
        anActivity('org-a', { created_at: new Date(base + i * 1000).toISOString() }),
      );
      await store.record([...all].reverse());
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await store.list('org-a', { after, limit: 3 });
        seen.push(...page.items.map((a) => a.id));
        if (!page.has_more) break;
        after = page.items[page.items.length - 1]!.id;
      }
      expect(seen).toEqual(all.map((a) => a.id));
    });

    it('filters by exclusive time bounds and alarm', async () => {
      const store = await make();
      const base = Date.parse('2026-06-01T00:00:00Z');
      const all = Array.from({ length: 5 }, (_, i) =>
        anActivity('org-a', {
          created_at: new Date(base + i * 1000).toISOString(),
          alarm: i % 2 === 0,
        }),
      );
      await store.record(all);
      const between = await store.list('org-a', {
        since: base + 1000,
        until: base + 4000,
        limit: 10,
      });
      expect(between.items.map((a) => a.id)).toEqual([all[2]!.id, all[3]!.id]);
      const alarms = await store.list('org-a', { alarmOnly: true, limit: 10 });
      expect(alarms.items.map((a) => a.id)).toEqual([all[0]!.id, all[2]!.id, all[4]!.id]);
    });

    it('reads one range of ids: after and before are exclusive, alarm_only keeps only alarms', async () => {
      const store = await make();
      const gen = createIdGenerator();
      const base = Date.parse('2026-06-02T00:00:00Z');
      const all = Array.from({ length: 9 }, (_, i) =>
        anActivity('org-a', {
          id: gen(base + i),
          created_at: new Date(base + i).toISOString(),
          alarm: i % 3 === 0,
        }),
      );
      await store.record(shuffleOnce(all));
      const ids = all.map((a) => a.id);
      const range = await store.list('org-a', { after: ids[1], before: ids[7], limit: 100 });
      expect(range.items.map((a) => a.id)).toEqual(ids.slice(2, 7));
      const alarms = await store.list('org-a', {
        after: ids[0],
        before: ids[8],
        alarmOnly: true,
        limit: 1,
      });
      expect(alarms.items.map((a) => a.id)).toEqual([ids[3]]);
      expect(alarms.has_more).toBe(true);
      const rest = await store.list('org-a', {
        after: ids[3],
        before: ids[8],
        alarmOnly: true,
        limit: 1,
      });
      expect(rest.items.map((a) => a.id)).toEqual([ids[6]]);
      expect(rest.has_more).toBe(false);
    });

    it('reads every id older than the bound once, in id order, however late each arrived', async () => {
      // Two processes make ids in time order, but their writes reach the store in any order and
      // in several batches; newer activity keeps arriving while the reader pages. A reader that
      // pages by id below a settled bound (the export's `until`) must still see each older id
      // exactly once, in id order: ids sort by their millisecond first, whichever process made
      // them.
      const store = await make();
      const processes = [createIdGenerator(), createIdGenerator()];
      const base = Date.parse('2026-07-01T00:00:00Z');
      const until = base + 40;
      const make1 = (ms: number, process: number): Activity =>
        anActivity('org-a', {
          id: processes[process]!(base + ms),
          created_at: new Date(base + ms).toISOString(),
        });
      const made: Activity[] = [];
      // Both processes write in most milliseconds, sometimes several times, across the bound.
      for (let ms = 0; ms < 60; ms++) {
        for (let n = 0; n < 1 + (ms % 3); n++) made.push(make1(ms, (ms + n) % 2));
      }
      const random = seeded(20260701);
      const arrival = shuffle(made, random);
      for (let i = 0; i < arrival.length; i += 7) await store.record(arrival.slice(i, i + 7));
      const expected = made
        .filter((a) => Date.parse(a.created_at) < until)
        .map((a) => a.id)
        .sort();
      // Id order is time order, across processes.
      const times = expected.map((id) => made.find((a) => a.id === id)!.created_at);
      expect([...times].sort()).toEqual(times);

      const seen: string[] = [];
      let after: string | undefined;
      let late = 60;
      for (let pages = 0; pages < 200; pages++) {
        const page = await store.list('org-a', { after, until, limit: 4 });
        seen.push(...page.items.map((a) => a.id));
        // Newer activity from both processes, recorded between the reader's pages.
        await store.record(shuffle([make1(late, 0), make1(late, 1), make1(late + 1, 0)], random));
        late += 2;
        if (!page.has_more) break;
        after = page.items[page.items.length - 1]!.id;
      }
      expect(seen).toEqual(expected);
    });
  });
}

function shuffleOnce<T>(items: T[]): T[] {
  return shuffle(items, seeded(7));
}
