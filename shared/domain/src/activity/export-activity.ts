import {
  AppError,
  decodeOpaque,
  encodeOpaque,
  idAtOrBefore,
  idFrom,
  isId,
  notFound,
  ValidationError,
} from '@guard/platform';
import type { ActivityStore, OrgStore } from '../ports.js';
import type { Activity, Principal } from '../types.js';
import { requireAdmin } from '../policies/deps.js';
import { requireStaff } from '../orgs/org-access.js';

export interface ActivityExportDeps {
  activities: ActivityStore;
  orgs: OrgStore;
  now: () => Date;
  /**
   * How long after its id's time an activity may still arrive in the store (batching, Kafka lag,
   * ingester restarts). Export only reads ids older than now minus this: a reader that paged past
   * a point never misses a row that lands behind it later.
   */
  settleMs: number;
}

/** The export query, parsed (times in epoch milliseconds). */
export interface ActivityExportQuery {
  cursor?: string | undefined;
  /** Exclusive: activities recorded after this time. */
  since?: number | undefined;
  /** Exclusive: activities recorded before this time. */
  until?: number | undefined;
  limit: number;
  alarmOnly: boolean;
}

export interface ActivityExportPage {
  activities: Activity[];
  /** The cursor for the next page; null when `has_more` is false. */
  next_cursor: string | null;
  has_more: boolean;
}

const CURSOR_VERSION = 1;

/**
 * The cursor is opaque to clients: the last id returned, bound to the org it was read from, so
 * that it is refused (422) when presented for another org instead of positioning a read there.
 */
export function encodeCursor(orgId: string, lastId: string): string {
  return encodeOpaque({ v: CURSOR_VERSION, o: orgId, a: lastId });
}

function badCursor(msg: string): ValidationError {
  return ValidationError.single(['query', 'cursor'], msg, 'value_error');
}

export function decodeCursor(orgId: string, cursor: string): string {
  const c = decodeOpaque(cursor) as { v?: unknown; o?: unknown; a?: unknown } | null | undefined;
  if (
    typeof c !== 'object' ||
    c === null ||
    c.v !== CURSOR_VERSION ||
    typeof c.o !== 'string' ||
    typeof c.a !== 'string' ||
    !isId(c.a)
  )
    throw badCursor(
      'is not a cursor this service issued (send the `next_cursor` of a previous page)',
    );
  if (c.o !== orgId)
    throw badCursor("belongs to another organization's export and cannot be used here");
  return c.a;
}

/**
 * The id range an export reads: after the cursor or `since`, whichever is later, and before
 * `until` or the settled watermark, whichever is earlier. Ids sort by the millisecond they were
 * made in, which is when the activity was recorded: the time bounds and the watermark become one
 * range of ids. Export jobs freeze this range when they are created.
 */
export function exportIdRange(
  deps: Pick<ActivityExportDeps, 'now' | 'settleMs'>,
  orgId: string,
  q: Pick<ActivityExportQuery, 'cursor' | 'since' | 'until'>,
): { after: string | undefined; before: string } {
  if (q.since !== undefined && q.until !== undefined && q.until <= q.since)
    throw ValidationError.single(
      ['query', 'until'],
      'must be later than `since` (both bounds are exclusive)',
      'value_error',
    );
  const after = [
    q.cursor ? decodeCursor(orgId, q.cursor) : undefined,
    q.since !== undefined ? idAtOrBefore(q.since) : undefined,
  ]
    .filter((b): b is string => b !== undefined)
    .sort()
    .at(-1);
  const settled = idFrom(deps.now().getTime() - deps.settleMs);
  const before = q.until !== undefined && idFrom(q.until) < settled ? idFrom(q.until) : settled;
  return { after, before };
}

async function exportOrg(
  deps: ActivityExportDeps,
  orgId: string,
  q: ActivityExportQuery,
): Promise<ActivityExportPage> {
  const { after: lower, before: upper } = exportIdRange(deps, orgId, q);
  const page = await deps.activities.list(orgId, {
    after: lower,
    before: upper,
    alarmOnly: q.alarmOnly,
    limit: q.limit,
  });
  const last = page.items.at(-1);
  return {
    activities: page.items,
    has_more: page.has_more,
    next_cursor: page.has_more && last ? encodeCursor(orgId, last.id) : null,
  };
}

/** GET /activity/export: the caller's organization, admins only, oldest first. */
export async function exportActivity(
  deps: ActivityExportDeps,
  principal: Principal,
  q: ActivityExportQuery,
): Promise<ActivityExportPage> {
  requireAdmin(principal);
  return exportOrg(deps, principal.org_id, q);
}

/**
 * GET /activity/staff-export: an explicit organization, staff keys only, and only organizations
 * of the red-teaming kind (their traffic is made to be studied).
 */
export async function staffExportActivity(
  deps: ActivityExportDeps,
  principal: Principal,
  orgId: string,
  q: ActivityExportQuery,
): Promise<ActivityExportPage> {
  requireStaff(principal);
  const org = await deps.orgs.get(orgId);
  if (!org) throw notFound(`Organization ${orgId}`);
  if (org.kind !== 'red_team')
    throw new AppError(
      'ORG_NOT_EXPORTABLE',
      `Organization ${orgId} is of kind ${org.kind}; only red_team organizations can be exported by staff`,
    );
  return exportOrg(deps, orgId, q);
}
