import { AppError } from '@guard/platform';

/**
 * No scorer can take the request: the scoring queue is full, or Redis cannot be reached. Unlike
 * a scoring that ran out of time, this is not decided by the policy's fail mode: the caller is
 * told to come back later (503 `SCORER_UNAVAILABLE` in the platform's
 * ErrorCodes).
 */
export class ScorerUnavailableError extends AppError {
  constructor(message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super('SCORER_UNAVAILABLE', message, details ?? null);
    this.name = 'ScorerUnavailableError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}
