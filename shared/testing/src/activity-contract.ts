import { describe, expect, it } from 'vitest';
import type { ActivityStore } from '@guard/domain';
import { anActivity } from './builders.js';

export function activityStoreContract(name: string, make: () => Promise<ActivityStore> | ActivityStore): void {
  describe(`ActivityStore contract: ${name}`, () => {
    it('records idempotently and reads back within the org only', async () => {
      const store = await make();
      const a = anActivity('org-a', { metadata: { k: 'v' }, pre_analysis: { violation: 0.9, violated_rules: [1] } });
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
      const all = Array.from({ length: 7 }, (_, i) => anActivity('org-a', { created_at: new Date(base + i * 1000).toISOString() }));
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
      const all = Array.from({ length: 5 }, (_, i) => anActivity('org-a', { created_at: new Date(base + i * 1000).toISOString(), alarm: i % 2 === 0 }));
      await store.record(all);
      const between = await store.list('org-a', { since: base + 1000, until: base + 4000, limit: 10 });
      expect(between.items.map((a) => a.id)).toEqual([all[2]!.id, all[3]!.id]);
      const alarms = await store.list('org-a', { alarmOnly: true, limit: 10 });
      expect(alarms.items.map((a) => a.id)).toEqual([all[0]!.id, all[2]!.id, all[4]!.id]);
    });
  });
}
