import { AppError, notFound } from '@guard/platform';
import type { Principal } from '../types.js';

/** Staff keys act across organizations: they create and list orgs and manage any org's keys. */
export function requireStaff(principal: Principal): void {
  if (!principal.staff) {
    throw new AppError('STAFF_REQUIRED', 'This operation requires a staff API key');
  }
}

/**
 * Reading an org: staff, or any key of that org. Another org answers 404, as if it did not
 * exist, so that org ids cannot be probed.
 */
export function requireOrgReader(principal: Principal, orgId: string): void {
  if (!principal.staff && principal.org_id !== orgId) throw notFound('Organization');
}

/** Changing an org or its keys: staff, or an admin key of that org (a member gets 403). */
export function requireOrgAdmin(principal: Principal, orgId: string): void {
  requireOrgReader(principal, orgId);
  if (!principal.staff && principal.role !== 'admin') {
    throw new AppError(
      'ADMIN_REQUIRED',
      'This operation requires an admin API key of the organization',
    );
  }
}
