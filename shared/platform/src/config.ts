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

/** GUARD_LOG_LEVEL, the same for every role. */
export const envLogLevel = () =>
  z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

/** A Cassandra keyspace name, as every role that reads or migrates the tables checks it. */
export const CassandraKeyspace = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,47}$/, 'a Cassandra keyspace name: lower case letters, digits, _');

/** Where the Cassandra cluster is, for every role that uses it. */
export const cassandraEnv = (defaultContactPoints?: string) => ({
  CASSANDRA_CONTACT_POINTS: envHostList(defaultContactPoints),
  CASSANDRA_LOCAL_DC: z.string().min(1).default('datacenter1'),
  CASSANDRA_KEYSPACE: CassandraKeyspace.default('guard'),
});

export interface CassandraSettings {
  contactPoints: string[];
  localDataCenter: string;
  keyspace: string;
}

export function cassandraSettings(e: {
  CASSANDRA_CONTACT_POINTS: string[];
  CASSANDRA_LOCAL_DC: string;
  CASSANDRA_KEYSPACE: string;
}): CassandraSettings {
  return {
    contactPoints: e.CASSANDRA_CONTACT_POINTS,
    localDataCenter: e.CASSANDRA_LOCAL_DC,
    keyspace: e.CASSANDRA_KEYSPACE,
  };
}

const optionalUrl = () => z.preprocess((v) => (v === '' ? undefined : v), z.url().optional());

/** How a process runs the scoring core: threads, deadline, inline size, the judge model. */
export const scoringEnv = () => ({
  GUARD_SCORE_TIMEOUT_MS: envInt(10_000, 50, 600_000),
  GUARD_SCORE_INLINE_CHARS: envInt(4000, 0, 1_000_000),
  // "auto" is resolved by the role: the cores it may use.
  GUARD_SCORE_THREADS: z
    .string()
    .default('auto')
    .transform((v, ctx) => {
      if (v === 'auto' || v === '') return 'auto' as const;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 64) {
        ctx.addIssue({
          code: 'custom',
          message: `expected "auto", 0 (score on the request thread) or a whole number up to 64, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    }),
  GUARD_JUDGE_BASE_URL: optionalUrl(),
  GUARD_JUDGE_MODEL: z.string().optional(),
  GUARD_JUDGE_API_KEY: z.string().optional(),
  GUARD_JUDGE_TIMEOUT_MS: envInt(8000, 100, 600_000),
  // The contextual encoder stage for jailbreaks, for policies that do not choose
  // (scanners_config.encoder): off, cascade (the static model's unsure inputs) or all.
  GUARD_ENCODER: z.enum(['off', 'cascade', 'all']).default('cascade'),
  // Encoder threads of a process whose requests score on its request thread.
  GUARD_ENCODER_THREADS: envInt(1, 1, 64),
  // Texts whose encoder outputs a process remembers, in a table its threads share (0: none):
  // repeated texts, such as an agent's earlier tool results, are then read once.
  GUARD_ENCODER_CACHE: envInt(4096, 0, 1_000_000),
  // The multilingual reader (harm of requests the English models cannot read), when its weights
  // are installed (npm run fetch:multilingual); off with the encoder stage too.
  GUARD_MULTILINGUAL: z.enum(['on', 'off']).default('on'),
});

export interface EncoderSettings {
  mode: 'off' | 'cascade' | 'all';
  threads: number;
  /** Texts whose encoder outputs are remembered (GUARD_ENCODER_CACHE; 0: none). */
  cache: number;
  /** The multilingual reader (GUARD_MULTILINGUAL), when its weights are installed. */
  multilingual: boolean;
}

export function encoderSettings(e: {
  GUARD_ENCODER: EncoderSettings['mode'];
  GUARD_ENCODER_THREADS: number;
  GUARD_ENCODER_CACHE: number;
  GUARD_MULTILINGUAL: 'on' | 'off';
}): EncoderSettings {
  return {
    mode: e.GUARD_ENCODER,
    threads: e.GUARD_ENCODER_THREADS,
    cache: e.GUARD_ENCODER_CACHE,
    multilingual: e.GUARD_MULTILINGUAL === 'on',
  };
}

export interface JudgeSettings {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}

/** The judge model when GUARD_JUDGE_BASE_URL is set, else null (local detectors only). */
export function judgeSettings(e: {
  GUARD_JUDGE_BASE_URL?: string | undefined;
  GUARD_JUDGE_MODEL?: string | undefined;
  GUARD_JUDGE_API_KEY?: string | undefined;
  GUARD_JUDGE_TIMEOUT_MS: number;
}): JudgeSettings | null {
  return e.GUARD_JUDGE_BASE_URL
    ? {
        baseUrl: e.GUARD_JUDGE_BASE_URL,
        model: e.GUARD_JUDGE_MODEL ?? 'gpt-4o-mini',
        apiKey: e.GUARD_JUDGE_API_KEY,
        timeoutMs: e.GUARD_JUDGE_TIMEOUT_MS,
      }
    : null;
}
