import { Router, type Request } from 'express';
import {
  createOrgKey,
  getOrg,
  listOrgKeys,
  listOrgs,
  registerOrg,
  requireOrgAdmin,
  requireStaff,
  revokeOrgKey,
  setOrgDefaultPolicy,
  type AuthDeps,
  type PolicyStore,
} from '@guard/domain';
import { ApiKeyCreateRequest, OrgCreateRequest, OrgDefaultPolicyRequest } from '@guard/contracts';
import { requirePrincipal } from '../http/context.js';
import { parseBody } from '../http/body.js';

export interface OrgsRouterDeps extends AuthDeps {
  policies: PolicyStore;
}

const param = (req: Request, name: string): string => String(req.params[name] ?? '');

/**
 * Organizations and their API keys over HTTP: what the `guard` CLI does on the local store, for
 * deployments with no data directory to run it on. The verbs decide who may do what; the
 * checks repeated here before validation make a caller without the right answer 403/404
 * whatever body it sent (as on the policy routes).
 */
export function orgsRouter(deps: OrgsRouterDeps): Router {
  const r = Router();

  r.post('/', async (req, res) => {
    const principal = requirePrincipal(req);
    requireStaff(principal);
    const body = parseBody(OrgCreateRequest, req);
    res.status(201).json(await registerOrg(deps, principal, body));
  });

  r.get('/', async (req, res) => {
    res.json({ orgs: await listOrgs(deps, requirePrincipal(req)) });
  });

  r.get('/:org_id', async (req, res) => {
    res.json(await getOrg(deps, requirePrincipal(req), param(req, 'org_id')));
  });

  r.put('/:org_id/default-policy', async (req, res) => {
    const principal = requirePrincipal(req);
    requireOrgAdmin(principal, param(req, 'org_id'));
    const body = parseBody(OrgDefaultPolicyRequest, req);
    res.json(await setOrgDefaultPolicy(deps, principal, param(req, 'org_id'), body.policy_id));
  });

  r.post('/:org_id/keys', async (req, res) => {
    const principal = requirePrincipal(req);
    requireOrgAdmin(principal, param(req, 'org_id'));
    const body = parseBody(ApiKeyCreateRequest, req);
    res.status(201).json(await createOrgKey(deps, principal, param(req, 'org_id'), body));
  });

  r.get('/:org_id/keys', async (req, res) => {
    res.json({ keys: await listOrgKeys(deps, requirePrincipal(req), param(req, 'org_id')) });
  });

  r.delete('/:org_id/keys/:key_id', async (req, res) => {
    res.json(
      await revokeOrgKey(deps, requirePrincipal(req), param(req, 'org_id'), param(req, 'key_id')),
    );
  });

  return r;
}
