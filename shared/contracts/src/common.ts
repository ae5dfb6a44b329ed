import { z } from 'zod';

export const ErrorBody = z
  .object({
    error: z.literal(true),
    message: z.string(),
    detail: z.string(),
    error_code: z.string(),
    details: z.record(z.string(), z.unknown()).nullable().meta({
      description:
        'An object or null, never an array. Validation problems (VALIDATION_ERROR, and BAD_REQUEST for an unreadable body) are listed under `errors` as `{loc, msg, type}` items.',
    }),
  })
  .meta({ id: 'ErrorBody', description: 'Standard error body for every non-validation error.' });

export const ValidationErrorBody = z
  .object({
    detail: z.array(
      z.object({
        loc: z.array(z.union([z.string(), z.number()])),
        msg: z.string(),
        type: z.string(),
      }),
    ),
  })
  .meta({
    id: 'ValidationErrorBody',
    description: 'Validation error body (policy and activity endpoints).',
  });

export const Threshold = z.number().min(0).max(1);
export const IsoTimestamp = z.string().meta({ format: 'date-time' });
