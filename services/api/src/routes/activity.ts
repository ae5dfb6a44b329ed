import { Router } from 'express';
import { parseOrThrow } from '@guard/platform';
import { exportActivity, staffExportActivity, type ActivityExportDeps } from '@guard/domain';
import { ActivityExportQuery, ActivityStaffExportQuery } from '@guard/contracts';
import { requirePrincipal } from '../http/context.js';

/** Activity export: the caller's organization (admins), or a red-team organization (staff). */
export function activityRouter(deps: ActivityExportDeps): Router {
  const r = Router();
  r.get('/export', async (req, res) => {
    const q = parseOrThrow(ActivityExportQuery, req.query, ['query']);
    const page = await exportActivity(deps, requirePrincipal(req), {
      cursor: q.cursor,
      since: q.since,
      until: q.until,
      limit: q.limit,
      alarmOnly: q.alarm_only,
    });
    res.json(page);
  });
  r.get('/staff-export', async (req, res) => {
    const q = parseOrThrow(ActivityStaffExportQuery, req.query, ['query']);
    const page = await staffExportActivity(deps, requirePrincipal(req), q.org_id, {
      cursor: q.cursor,
      since: q.since,
      until: q.until,
      limit: q.limit,
      alarmOnly: q.alarm_only,
    });
    res.json(page);
  });
  return r;
}
