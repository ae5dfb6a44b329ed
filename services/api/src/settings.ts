import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { envBool, envBytes, envInt, envLogLevel } from '@guard/platform';
import { PROVIDER_KINDS, STREAM_MODES, type StreamModeration } from '@guard/domain';
import {
  DEFAULT_BASE_URLS,
  type UpstreamRoute,
  type UpstreamRouting,
} from './completions/upstream-routing.js';
import type { ApiConfig } from './deps.js';

const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

/**
 * The settings of the HTTP API, the same in every process that serves it (the standalone server,
 * the distributed `api` role): each role's config spreads this shape into its own and maps it
 * with `apiSettings`. Every variable is documented in the README ("Settings").
 */
export const API_ENV = {
  GUARD_BODY_LIMIT: envBytes(1024 * 1024),
  GUARD_MAX_JSON_DEPTH: envInt(64, 2, 1000),
  GUARD_LOG_LEVEL: envLogLevel(),
  GUARD_LOG_CONTENT: envBool(false),
  GUARD_ACCESS_LOG: envBool(true),
  GUARD_AUTH_CACHE_TTL_MS: envInt(2000, 0, 3_600_000),
  GUARD_MONITOR_MAX_MESSAGES: envInt(500, 1, 100_000),
  GUARD_MONITOR_MAX_CHARS: envInt(200_000, 1, 50_000_000),
  GUARD_FAIL_MODE: z.enum(['open', 'closed']).default('closed'),
  GUARD_ACTIVITY_EXCERPT_CHARS: envInt(200, 0, 100_000),
  GUARD_OPENAI_BASE_URL: optional(z.url()),
  GUARD_OPENAI_API_KEY: optional(z.string()),
  GUARD_ANTHROPIC_BASE_URL: optional(z.url()),
  GUARD_ANTHROPIC_API_KEY: optional(z.string()),
  GUARD_GEMINI_BASE_URL: optional(z.url()),
  GUARD_GEMINI_API_KEY: optional(z.string()),
  GUARD_UPSTREAM_ROUTES: optional(z.string()),
  GUARD_UPSTREAM_TIMEOUT_MS: envInt(60_000, 100, 3_600_000),
  GUARD_UPSTREAM_IDLE_TIMEOUT_MS: envInt(120_000, 100, 3_600_000),
  GUARD_STREAM_MODE: z.enum(STREAM_MODES).default('window'),
  GUARD_STREAM_WINDOW_CHARS: envInt(400, 1, 1_000_000),
  GUARD_STREAM_OVERLAP_CHARS: envInt(100, 0, 100_000),
  GUARD_OUTPUT_CONTEXT_CHARS: envInt(1000, 0, 1_000_000),
  GUARD_ACTIVITY_SETTLE_MS: envInt(2000, 0, 3_600_000),
  GUARD_BOOTSTRAP_ADMIN_KEY: optional(z.string().min(20).max(256)),
  GUARD_METRICS: envBool(true),
};

export type ApiEnv = z.output<z.ZodObject<typeof API_ENV>>;

export interface ApiSettings {
  bodyLimitBytes: number;
  maxJsonDepth: number;
  logLevel: string;
  logContent: boolean;
  accessLog: boolean;
  /** The staff key made on first start, when no key exists yet. */
  bootstrapAdminKey: string | undefined;
  authCacheTtlMs: number;
  maxMessages: number;
  maxTextChars: number;
  failMode: 'open' | 'closed';
  excerptChars: number;
  /** Where protected completions go: a provider per endpoint family, and the routing file's routes. */
  upstream: UpstreamRouting;
  upstreamTimeoutMs: number;
  upstreamIdleTimeoutMs: number;
  stream: StreamModeration;
  outputContextChars: number;
  activitySettleMs: number;
  /** Count requests, decisions and upstream calls and serve them at `/metrics`. */
  metrics: boolean;
}

/** What of the settings the HTTP layer itself reads (ApiDeps.config). */
export function apiConfigOf(s: ApiSettings, version: string): ApiConfig {
  return {
    bodyLimitBytes: s.bodyLimitBytes,
    maxJsonDepth: s.maxJsonDepth,
    version,
    accessLog: s.accessLog,
    maxMessages: s.maxMessages,
    maxTextChars: s.maxTextChars,
    failMode: s.failMode,
    excerptChars: s.excerptChars,
    stream: s.stream,
    outputContextChars: s.outputContextChars,
    activitySettleMs: s.activitySettleMs,
  };
}

export function apiSettings(e: ApiEnv, env: Record<string, string | undefined>): ApiSettings {
  return {
    bodyLimitBytes: e.GUARD_BODY_LIMIT,
    maxJsonDepth: e.GUARD_MAX_JSON_DEPTH,
    logLevel: e.GUARD_LOG_LEVEL,
    logContent: e.GUARD_LOG_CONTENT,
    accessLog: e.GUARD_ACCESS_LOG,
    bootstrapAdminKey: e.GUARD_BOOTSTRAP_ADMIN_KEY,
    authCacheTtlMs: e.GUARD_AUTH_CACHE_TTL_MS,
    maxMessages: e.GUARD_MONITOR_MAX_MESSAGES,
    maxTextChars: e.GUARD_MONITOR_MAX_CHARS,
    failMode: e.GUARD_FAIL_MODE,
    excerptChars: e.GUARD_ACTIVITY_EXCERPT_CHARS,
    upstream: {
      providers: {
        openai: {
          baseUrl: e.GUARD_OPENAI_BASE_URL ?? DEFAULT_BASE_URLS.openai,
          apiKey: e.GUARD_OPENAI_API_KEY ?? null,
        },
        anthropic: {
          baseUrl: e.GUARD_ANTHROPIC_BASE_URL ?? DEFAULT_BASE_URLS.anthropic,
          apiKey: e.GUARD_ANTHROPIC_API_KEY ?? null,
        },
        gemini: {
          baseUrl: e.GUARD_GEMINI_BASE_URL ?? DEFAULT_BASE_URLS.gemini,
          apiKey: e.GUARD_GEMINI_API_KEY ?? null,
        },
      },
      routes: e.GUARD_UPSTREAM_ROUTES ? loadRoutes(e.GUARD_UPSTREAM_ROUTES, env) : [],
    },
    upstreamTimeoutMs: e.GUARD_UPSTREAM_TIMEOUT_MS,
    upstreamIdleTimeoutMs: e.GUARD_UPSTREAM_IDLE_TIMEOUT_MS,
    stream: {
      mode: e.GUARD_STREAM_MODE,
      windowChars: e.GUARD_STREAM_WINDOW_CHARS,
      overlapChars: e.GUARD_STREAM_OVERLAP_CHARS,
    },
    outputContextChars: e.GUARD_OUTPUT_CONTEXT_CHARS,
    activitySettleMs: e.GUARD_ACTIVITY_SETTLE_MS,
    metrics: e.GUARD_METRICS,
  };
}

const RoutesFile = z.strictObject({
  routes: z.array(
    z
      .strictObject({
        model: z.string().min(1),
        provider: z.enum(PROVIDER_KINDS),
        base_url: z.url().optional(),
        api_key: z.string().min(1).optional(),
        api_key_env: z.string().min(1).optional(),
      })
      .refine((r) => !(r.api_key && r.api_key_env), {
        message: 'give the key as api_key or api_key_env, not both',
      }),
  ),
});

/**
 * The routing file (GUARD_UPSTREAM_ROUTES): models, by name or `*` pattern, to a provider's base
 * URL and key. A key is best named by environment variable (`api_key_env`), so that the file
 * holds no secret.
 */
export function loadRoutes(file: string, env: Record<string, string | undefined>): UpstreamRoute[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(
      `GUARD_UPSTREAM_ROUTES: could not read ${file} as JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const parsed = RoutesFile.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `GUARD_UPSTREAM_ROUTES: ${file} is not a routing file: ${z.prettifyError(parsed.error)}`,
    );
  return parsed.data.routes.map((r, i) => {
    let apiKey: string | null = r.api_key ?? null;
    if (r.api_key_env) {
      const v = env[r.api_key_env];
      if (!v)
        throw new Error(
          `GUARD_UPSTREAM_ROUTES: route ${i + 1} (${r.model}) names api_key_env ${r.api_key_env}, which is not set`,
        );
      apiKey = v;
    }
    return {
      model: r.model,
      provider: r.provider,
      baseUrl: r.base_url ?? DEFAULT_BASE_URLS[r.provider],
      apiKey,
    };
  });
}
