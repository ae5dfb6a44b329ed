import type { PolicyStore } from '../ports.js';
import type { Principal } from '../types.js';
import { AppError } from '@guard/platform';

export interface PolicyDeps {
  policies: PolicyStore;
  newId: () => string;
  now: () => Date;
}

export function requireAdmin(principal: Principal): void {
  if (principal.role !== 'admin') {
    throw new AppError(
      'ADMIN_REQUIRED',
      'This operation requires an admin API key of the organization',
    );
  }
}
