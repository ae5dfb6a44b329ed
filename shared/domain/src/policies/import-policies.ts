import { createHash } from 'node:crypto';
import { AppError, isAppError, ValidationError } from '@guard/platform';
import type { Policy, Principal } from '../types.js';
import type { JobRunner } from '../jobs/job-ports.js';
import { jsonEqual } from '../json-diff.js';
import { createPolicy } from './create-policy.js';
import { requireAdmin, type PolicyDeps } from './deps.js';
import { contentFromInput, contentOf, type PolicyInput } from './policy-content.js';

/** Import one policy in export form: any ids it carries are ignored, a new id is generated. */
export async function importPolicy(
  deps: PolicyDeps,
  principal: Principal,
  input: PolicyInput,
): Promise<Policy> {
  return createPolicy(deps, principal, input, 'import');
}

export interface BulkImportResult {
  total: number;
  successful: number;
  failed: number;
  results: { name: string | null; success: boolean; id: string | null; error: string | null }[];
}

/** A bulk item is either a parsed policy or the validation problem found with it. */
export type BulkItem =
  { ok: true; input: PolicyInput } | { ok: false; name: string | null; error: string };

export interface BulkImportDeps extends PolicyDeps {
  jobs: JobRunner;
}

/**
 * The job id of a bulk import: from the org, the client's Idempotency-Key when it sends one
 * (else a fresh id: two plain requests are two imports, as before), and the items. A client that
 * retries with the same key and body joins the import already made instead of importing twice.
 */
export function bulkImportJobId(orgId: string, key: string, items: BulkItem[]): string {
  const digest = createHash('sha256')
    .update(`${orgId}\n${key}\n${JSON.stringify(items)}`)
    .digest('hex')
    .slice(0, 32);
  return `bulk-import:${orgId}:${digest}`;
}

/**
 * POST /policies/bulk-import: runs as a job (in this process, or a Temporal workflow) and answers
 * its result once it has finished. Each policy's id is derived from the job id and its index, so
 * a job resumed after a crash imports every policy exactly once.
 */
export async function bulkImportPolicies(
  deps: BulkImportDeps,
  principal: Principal,
  items: BulkItem[],
  idempotencyKey?: string,
): Promise<BulkImportResult> {
  requireAdmin(principal);
  const started = await deps.jobs.start({
    id: bulkImportJobId(principal.org_id, idempotencyKey ?? deps.newId(), items),
    org_id: principal.org_id,
    created_at: deps.now().toISOString(),
    kind: 'policy_bulk_import',
    input: { userId: principal.user_id, items },
  });
  const job = await deps.jobs.waitFor(started.id);
  if (job.kind !== 'policy_bulk_import')
    throw new AppError('BAD_REQUEST', 'The Idempotency-Key was used for another kind of job');
  if (job.status !== 'succeeded' || !job.result)
    throw new AppError(
      'INTERNAL_ERROR',
      `The bulk import could not be completed: ${job.error ?? 'unknown error'}`,
    );
  return job.result;
}

/**
 * One item of a bulk import, stored under the given ids. Stored already with the same content
 * (the same job ran this item before it was interrupted) counts as done: the store refuses a known
 * id, so no item is imported twice.
 */
export async function importBulkItem(
  deps: PolicyDeps,
  principal: Principal,
  item: BulkItem,
  ids: { policy: string; version: string },
): Promise<BulkImportResult['results'][number]> {
  if (!item.ok) return { name: item.name, success: false, id: null, error: item.error };
  try {
    const p = await createPolicy(deps, principal, item.input, 'bulk_import', ids);
    return { name: p.name, success: true, id: p.id, error: null };
  } catch (err) {
    if (!(err instanceof ValidationError)) {
      const stored = await deps.policies.getLastState(principal.org_id, ids.policy);
      if (stored && sameContent(contentOf(stored.policy), contentFromInput(item.input)))
        return { name: stored.policy.name, success: true, id: stored.policy.id, error: null };
    }
    // Whatever went wrong with this item, the others (and the ids already created) still come
    // back: an unexpected failure is reported on its item rather than failing the whole call.
    const error =
      err instanceof ValidationError
        ? err.issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')
        : isAppError(err)
          ? err.message
          : 'internal error while storing this item; it was not imported';
    return { name: item.input.name, success: false, id: null, error };
  }
}

/** Equal as stored: JSON drops absent optional fields, which the parsed input may carry as undefined. */
function sameContent(a: unknown, b: unknown): boolean {
  return jsonEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}
