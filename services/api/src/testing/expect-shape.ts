import { z } from 'zod';

/** The id a contract schema registered with `.meta({ id })`, to name it in failures. */
export function schemaName(schema: z.ZodType): string {
  const id = schema.meta()?.id;
  return typeof id === 'string' ? id : 'the schema';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Paths of fields the body has and the parse result lost. Contract objects are not strict (an
 * answer may be read by older clients), so zod drops undeclared keys without a word: a field the
 * schema does not describe (an `org_id`, a `key_hash`) shows up only as this difference.
 */
function undeclaredFields(sent: unknown, kept: unknown, path: string): string[] {
  if (Array.isArray(sent) && Array.isArray(kept))
    return sent.flatMap((v, i) => undeclaredFields(v, kept[i], `${path}[${i}]`));
  if (!isObject(sent) || !isObject(kept)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(sent)) {
    const at = `${path}.${key}`;
    if (!Object.hasOwn(kept, key)) out.push(at);
    else out.push(...undeclaredFields(value, kept[key], at));
  }
  return out;
}

function excerpt(body: unknown): string {
  const text = JSON.stringify(body) ?? String(body);
  return text.length > 1500 ? `${text.slice(0, 1500)}...` : text;
}

/**
 * Asserts that `body` is exactly what `schema` describes: it parses, and it carries no field the
 * schema does not declare. Returns the parsed (typed) value. Throws an error that names the schema
 * and every problem, with the body, so a failing test reads without a debugger.
 */
export function expectShape<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new Error(
      `body does not match ${schemaName(schema)}:\n${z.prettifyError(parsed.error)}\nbody: ${excerpt(body)}`,
    );
  }
  const extra = undeclaredFields(body, parsed.data, '$');
  if (extra.length > 0) {
    throw new Error(
      `body carries fields ${schemaName(schema)} does not declare: ${extra.join(', ')}\nbody: ${excerpt(body)}`,
    );
  }
  return parsed.data;
}
