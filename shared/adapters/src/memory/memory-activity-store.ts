import {
  clone,
  type Activity,
  type ActivityPage,
  type ActivityQuery,
  type ActivityStore,
} from '@guard/domain';

export class MemoryActivityStore implements ActivityStore {
  private readonly byOrg = new Map<string, Map<string, Activity>>();

  async record(activities: Activity[]): Promise<void> {
    for (const a of activities) {
      let m = this.byOrg.get(a.org_id);
      if (!m) this.byOrg.set(a.org_id, (m = new Map()));
      if (!m.has(a.id)) m.set(a.id, clone(a));
    }
  }

  async list(orgId: string, q: ActivityQuery): Promise<ActivityPage> {
    const all = [...(this.byOrg.get(orgId)?.values() ?? [])]
      .filter(
        (a) =>
          (q.after === undefined || a.id > q.after) &&
          (q.before === undefined || a.id < q.before) &&
          (!q.alarmOnly || a.alarm),
      )
      .filter((a) => {
        const t = Date.parse(a.created_at);
        return (q.since === undefined || t > q.since) && (q.until === undefined || t < q.until);
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { items: all.slice(0, q.limit).map(clone), has_more: all.length > q.limit };
  }

  async get(orgId: string, id: string): Promise<Activity | null> {
    const a = this.byOrg.get(orgId)?.get(id);
    return a ? clone(a) : null;
  }
}
