import { idTime } from '@guard/platform';

/** How long to wait for an activity to be exported, and how often to look. */
const WAIT_MS = 10_000;
const POLL_MS = 100;
/** Milliseconds either side of the id's time: `since` and `until` are exclusive. */
const MARGIN_MS = 5;

/**
 * One recorded activity, read over HTTP as any client would: `GET /activity/export` with the
 * admin key of the org that recorded it (a member key gets 403), narrowed to a few milliseconds
 * around the time in its id. Export only returns activity older than the server's
 * GUARD_ACTIVITY_SETTLE_MS, so this polls until the activity shows up; null if it never does.
 */
export async function fetchActivity(
  baseUrl: string,
  adminKey: string,
  id: string,
): Promise<Record<string, any> | null> {
  const at = idTime(id).getTime();
  const window = new URLSearchParams({
    since: new Date(at - MARGIN_MS).toISOString(),
    until: new Date(at + MARGIN_MS).toISOString(),
  });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams(window);
      if (cursor) query.set('cursor', cursor);
      const page = await exportPage(baseUrl, adminKey, query);
      const found = page.activities.find((a) => a.id === id);
      if (found) return found;
      cursor = page.has_more ? page.next_cursor : null;
    } while (cursor);
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

interface ExportPage {
  activities: Record<string, any>[];
  next_cursor: string | null;
  has_more: boolean;
}

async function exportPage(
  baseUrl: string,
  adminKey: string,
  query: URLSearchParams,
): Promise<ExportPage> {
  const res = await fetch(`${baseUrl}/activity/export?${query}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`GET /activity/export?${query} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as ExportPage;
}
