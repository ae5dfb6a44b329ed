import { isAppError, ValidationError } from '@guard/platform';
import type { Policy, Principal } from '../types.js';
import { createPolicy } from './create-policy.js';
import { requireAdmin, type PolicyDeps } from './deps.js';
import type { PolicyInput } from './policy-content.js';

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

export async function bulkImportPolicies(
  deps: PolicyDeps,
  principal: Principal,
  items: BulkItem[],
): Promise<BulkImportResult> {
  requireAdmin(principal);
  const results: BulkImportResult['results'] = [];
  for (const item of items) {
    if (!item.ok) {
      results.push({ name: item.name, success: false, id: null, error: item.error });
      continue;
    }
    try {
      const p = await createPolicy(deps, principal, item.input, 'bulk_import');
      results.push({ name: p.name, success: true, id: p.id, error: null });
    } catch (err) {
      // Whatever went wrong with this item, the others (and the ids already created) still come
      // back: an unexpected failure is reported on its item rather than failing the whole call.
      const error =
        err instanceof ValidationError
          ? err.issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')
          : isAppError(err)
            ? err.message
            : 'internal error while storing this item; it was not imported';
      results.push({ name: item.input.name, success: false, id: null, error });
    }
  }
  const successful = results.filter((r) => r.success).length;
  return { total: results.length, successful, failed: results.length - successful, results };
}
