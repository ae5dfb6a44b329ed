import { Router, type Request } from 'express';
import { parseOrThrow, zodIssues } from '@guard/platform';
import {
  bulkImportPolicies,
  createPolicy,
  deletePolicy,
  getPolicy,
  getPolicyAtVersion,
  importPolicy,
  listAllPolicies,
  listPolicies,
  listPolicyVersions,
  toExportItem,
  updatePolicy,
  EXPORT_VERSION,
  type BulkImportDeps,
  type BulkItem,
  type Policy,
} from '@guard/domain';
import {
  BulkImportRequest,
  IdempotencyKey,
  PolicyCreateRequest,
  PolicyImportItem,
  PolicyImportRequest,
  PolicyListQuery,
  PolicyUpdateRequest,
} from '@guard/contracts';
import { requirePrincipal } from '../http/context.js';
import { parseBody, underLoc } from '../http/body.js';

/** The response form of a policy: storage details such as the owning org stay inside. */
export function policyResponse(p: Policy) {
  const { org_id: _org, id, ...rest } = p;
  return { id, ...rest };
}

const param = (req: Request, name: string): string => String(req.params[name] ?? '');

export function policiesRouter(deps: BulkImportDeps): Router {
  const r = Router();

  r.get('/', async (req, res) => {
    const q = parseOrThrow(PolicyListQuery, req.query, ['query']);
    const list = await listPolicies(deps, requirePrincipal(req), q.limit ?? null, q.offset);
    res.json({ ...list, policies: list.policies.map(policyResponse) });
  });

  r.get('/export', async (req, res) => {
    const all = await listAllPolicies(deps, requirePrincipal(req));
    res.json({
      policies: all.map(toExportItem),
      export_date: deps.now().toISOString(),
      export_version: EXPORT_VERSION,
      total: all.length,
    });
  });

  r.post('/', async (req, res) => {
    const body = parseBody(PolicyCreateRequest, req);
    const created = await underLoc(['body'], () => createPolicy(deps, requirePrincipal(req), body));
    res.status(201).json(policyResponse(created));
  });

  r.post('/import', async (req, res) => {
    const body = parseBody(PolicyImportRequest, req);
    const imported = await underLoc(['body', 'policy'], () =>
      importPolicy(deps, requirePrincipal(req), body.policy),
    );
    res.json(policyResponse(imported));
  });

  r.post('/bulk-import', async (req, res) => {
    const body = parseBody(BulkImportRequest, req);
    const items: BulkItem[] = body.policies.map((raw) => {
      const parsed = PolicyImportItem.safeParse(raw);
      if (parsed.success) return { ok: true, input: parsed.data };
      const name =
        typeof raw === 'object' &&
        raw !== null &&
        typeof (raw as { name?: unknown }).name === 'string'
          ? (raw as { name: string }).name
          : null;
      // Each result is its item's: problems name fields within the item.
      const error = zodIssues(parsed.error)
        .map((i) => `${i.loc.join('.')}: ${i.msg}`)
        .join('; ');
      return { ok: false, name, error };
    });
    const key = parseOrThrow(IdempotencyKey, req.headers['idempotency-key'], [
      'header',
      'idempotency-key',
    ]);
    res.json(await bulkImportPolicies(deps, requirePrincipal(req), items, key));
  });

  r.get('/:policy_id', async (req, res) => {
    res.json(policyResponse(await getPolicy(deps, requirePrincipal(req), param(req, 'policy_id'))));
  });

  r.get('/:policy_id/export', async (req, res) => {
    res.json(toExportItem(await getPolicy(deps, requirePrincipal(req), param(req, 'policy_id'))));
  });

  r.get('/:policy_id/versions', async (req, res) => {
    res.json(await listPolicyVersions(deps, requirePrincipal(req), param(req, 'policy_id')));
  });

  r.get('/:policy_id/versions/:version_id', async (req, res) => {
    const v = await getPolicyAtVersion(
      deps,
      requirePrincipal(req),
      param(req, 'policy_id'),
      param(req, 'version_id'),
    );
    res.json({ ...v, policy_state: policyResponse(v.policy_state) });
  });

  r.put('/:policy_id', async (req, res) => {
    const body = parseBody(PolicyUpdateRequest, req);
    const updated = await underLoc(['body'], () =>
      updatePolicy(deps, requirePrincipal(req), param(req, 'policy_id'), body),
    );
    res.json(policyResponse(updated));
  });

  r.delete('/:policy_id', async (req, res) => {
    res.json(await deletePolicy(deps, requirePrincipal(req), param(req, 'policy_id')));
  });

  return r;
}
