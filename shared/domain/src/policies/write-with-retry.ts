import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '@guard/platform';
import type { PolicyWriteResult } from '../ports.js';

/**
 * Attempts per write. Every refused attempt was overtaken by another write to the same policy
 * that landed, so a writer gives up only after this many others landed while it tried: up to
 * this many concurrent writers of one policy always all get through.
 */
export const MAX_POLICY_WRITE_ATTEMPTS = 10;

/** One try: read the policy, compute the change from what was read, write it compare-and-set. */
export type PolicyWriteAttempt<T> = () => Promise<{ write: PolicyWriteResult; value: T }>;

/**
 * Runs `attempt` until its write lands. A conflict means the state it computed from is no
 * longer the last one, so the whole attempt (read, patch, diff) runs again after a short random
 * pause that grows with each try, which spreads writers that collided apart. Errors the attempt
 * throws (not found, validation) end it at once.
 */
export async function writeWithRetry<T>(attempt: PolicyWriteAttempt<T>): Promise<T> {
  for (let n = 1; ; n++) {
    const { write, value } = await attempt();
    if (write.ok) return value;
    if (n >= MAX_POLICY_WRITE_ATTEMPTS) break;
    await sleep(Math.random() * Math.min(32, 2 ** n));
  }
  throw new AppError(
    'CONFLICT',
    'The policy is being changed by other requests at the same time; try again',
  );
}
