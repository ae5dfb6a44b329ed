import { Router, type Request } from 'express';
import {
  getActivityExportJob,
  openActivityExportDownload,
  startActivityExportJob,
  type ActivityExportJobDeps,
} from '@guard/domain';
import { ActivityExportJobRequest } from '@guard/contracts';
import { requirePrincipal } from '../http/context.js';
import { parseBody } from '../http/body.js';
import { writable } from '../http/drain.js';

const param = (req: Request, name: string): string => String(req.params[name] ?? '');

/** Activity export jobs: start one, follow it, download what it froze (admins, own org). */
export function activityExportJobsRouter(deps: ActivityExportJobDeps): Router {
  const r = Router();

  r.post('/export-jobs', async (req, res) => {
    const body = parseBody(ActivityExportJobRequest, req);
    const job = await startActivityExportJob(deps, requirePrincipal(req), {
      since: body.since ?? null,
      until: body.until ?? null,
      alarmOnly: body.alarm_only,
    });
    res.status(202).location(`/activity/export-jobs/${job.id}`).json(job);
  });

  r.get('/export-jobs/:id', async (req, res) => {
    res.json(await getActivityExportJob(deps, requirePrincipal(req), param(req, 'id')));
  });

  r.get('/export-jobs/:id/download', async (req, res) => {
    const id = param(req, 'id');
    const pages = await openActivityExportDownload(deps, requirePrincipal(req), id);
    res.status(200);
    res.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
    res.setHeader('content-disposition', `attachment; filename="activity-export-${id}.ndjson"`);
    // Page by page from the store, one write per page: memory holds one page whatever the size
    // of the export, and a slow reader holds the next read back until the socket drains.
    for await (const page of pages) {
      if (res.destroyed) return;
      let chunk = '';
      for (const activity of page) chunk += `${JSON.stringify(activity)}\n`;
      if (!res.write(chunk)) await writable(res);
    }
    res.end();
  });

  return r;
}
