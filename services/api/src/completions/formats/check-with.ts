import { z } from 'zod';

/**
 * Checks `value` with `schema` from inside a transform, reporting its problems where they are
 * (paths relative to the value). Provider wires are full of "this or that" fields (a string or a
 * list of blocks, a part or a list of parts); a zod union over them reports any problem deep
 * inside as "value of this form is not accepted" at the union itself, where choosing the schema
 * by looking at the value first keeps the precise `loc` and message.
 */
export function checkWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  ctx: z.RefinementCtx,
): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
}

/**
 * A `{type, ...}` object checked by the schema its `type` names. Types not listed pass as
 * `{type: 'other', kind}` (providers add block types often; the original body is what is
 * forwarded, so nothing is lost).
 */
export function tagged<const S extends Record<string, z.ZodType>>(schemas: S) {
  return z
    .looseObject({ type: z.string() })
    .transform((block, ctx): z.output<S[keyof S]> | { type: 'other'; kind: string } => {
      const schema = Object.hasOwn(schemas, block.type) ? schemas[block.type] : undefined;
      if (!schema) return { type: 'other', kind: block.type };
      return checkWith(schema, block, ctx) as z.output<S[keyof S]>;
    });
}

/** A string, or whatever `schema` takes. */
export function stringOr<S extends z.ZodType>(schema: S) {
  return z
    .unknown()
    .transform((v, ctx): string | z.output<S> =>
      typeof v === 'string' ? v : checkWith(schema, v, ctx),
    );
}
