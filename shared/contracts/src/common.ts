import { z } from 'zod';

export const ErrorBody = z
  .object({
    error: z.literal(true),
    message: z.string(),
    detail: z.string(),
    error_code: z.string(),
    details: z.unknown().nullable(),
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
