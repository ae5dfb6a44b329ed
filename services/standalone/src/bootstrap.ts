import type { Logger } from '@guard/platform';
import { bootstrapIfEmpty, type AuthDeps } from '@guard/domain';
import type { StandaloneConfig } from './config.js';

/**
 * First start on an empty store: the default org and its admin key, which is also a staff key
 * (the operator's), logged without the key. Returns the key only when it was generated here
 * (the caller prints it once).
 */
export async function bootstrapStore(
  deps: AuthDeps,
  config: StandaloneConfig,
  logger: Logger,
): Promise<{ generatedKey: string | null; bootstrapped: boolean }> {
  const boot = await bootstrapIfEmpty(deps, config.bootstrapAdminKey);
  if (!boot) return { generatedKey: null, bootstrapped: false };
  logger.info(
    { org_id: boot.org.id, key_source: boot.generated ? 'generated' : 'GUARD_BOOTSTRAP_ADMIN_KEY' },
    'first start: created the default org and an admin (staff) key',
  );
  return { generatedKey: boot.generated ? boot.key : null, bootstrapped: true };
}
