import { z } from 'zod';

/**
 * Parse environment variables once, at boot, with a zod schema. Failure lists every bad
 * variable so an operator can fix them all in one go.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

/** Env booleans: "1", "true", "yes", "on" are true; "0", "false", "no", "off", "" are false. */
export const envBool = (defaultValue: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return defaultValue;
      const s = v.toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: `expected a boolean, got "${v}"` });
      return z.NEVER;
    });

export const envInt = (defaultValue: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(defaultValue);

/**
 * A comma-separated list of `host:port` addresses (brokers, contact points): at least one. With
 * a default, an empty value counts as unset.
 */
export const envHostList = (defaultValue?: string) =>
  z.preprocess(
    (v) => (v === '' && defaultValue !== undefined ? defaultValue : (v ?? defaultValue)),
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string()).min(1, 'expected at least one host:port')),
  );

/** Sizes such as "1mb", "512kb", "1048576". */
export const envBytes = (defaultValue: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return defaultValue;
      const m = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/i.exec(v.trim());
      if (!m) {
        ctx.addIssue({ code: 'custom', message: `expected a size like 1mb, got "${v}"` });
        return z.NEVER;
      }
      const unit = (m[2] ?? 'b').toLowerCase();
      const mult = unit.startsWith('k')
        ? 1024
        : unit.startsWith('m')
          ? 1024 ** 2
          : unit.startsWith('g')
            ? 1024 ** 3
            : 1;
      return Math.floor(Number(m[1]) * mult);
    });
