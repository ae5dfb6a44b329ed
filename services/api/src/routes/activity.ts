import { Router } from 'express';
import { parseOrThrow } from '@guard/platform';
import {
  exportActivity,
  staffExportActivity,
  type ActivityExportDeps,
  type ActivityExportQuery as ExportQuery,
} from '@guard/domain';
import { ActivityExportQuery, ActivityStaffExportQuery } from '@guard/contracts';
import { requirePrincipal } from '../http/context.js';

function exportQuery(q: {
  cursor?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  limit: number;
  alarm_only: boolean;
}): ExportQuery {
  return {
    cursor: q.cursor,
    since: q.since,
    until: q.until,
    limit: q.limit,
    alarmOnly: q.alarm_only,
  };
}

/** Activity export: the caller's organization (admins), or a red-team organization (staff). */
export function activityRouter(deps: ActivityExportDeps): Router {
  const r = Router();
  r.get('/export', async (req, res) => {
    const q = parseOrThrow(ActivityExportQuery, req.query, ['query']);
    res.json(await exportActivity(deps, requirePrincipal(req), exportQuery(q)));
  });
  r.get('/staff-export', async (req, res) => {
    const q = parseOrThrow(ActivityStaffExportQuery, req.query, ['query']);
    res.json(await staffExportActivity(deps, requirePrincipal(req), q.org_id, exportQuery(q)));
  });
  return r;
}
