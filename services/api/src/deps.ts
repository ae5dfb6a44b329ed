import type { Logger } from '@guard/platform';
import type { GuardMetrics } from '@guard/platform/metrics';
import type {
  ActivitySink,
  ActivityStore,
  ApiKeyStore,
  JobRunner,
  OrgStore,
  PolicyStore,
  StreamModeration,
  UpstreamPort,
} from '@guard/domain';
import type { UpstreamRouting } from './completions/upstream-routing.js';
import type { ScoreEngine } from '@guard/scoring';

export interface ApiConfig {
  /** Largest accepted request body, in bytes (413 beyond). */
  bodyLimitBytes: number;
  /** Deepest nesting of JSON objects and arrays accepted in a body (400 beyond). */
  maxJsonDepth: number;
  /** Served in /openapi.json and /healthz. */
  version: string;
  /** Write one log line per request at info level. */
  accessLog: boolean;
  /** Most messages one monitor request may carry. */
  maxMessages: number;
  /** Most characters of text (all messages together) one monitor request may carry. */
  maxTextChars: number;
  /** `closed`: a scoring failure reports violation 1.0; `open`: 0.0. Both set error: true. */
  failMode: 'open' | 'closed';
  /** Characters of input/output kept in activity records (0 keeps none). */
  excerptChars: number;
  /** Defaults for moderating streamed completions. */
  stream: StreamModeration;
  /** Characters of the system prompt that output checks see as context. */
  outputContextChars: number;
  /** Export reads only activity older than this many milliseconds (the longest ingest lag). */
  activitySettleMs: number;
}

/** Everything the HTTP layer needs, handed in by a composition root; createApp does no I/O. */
export interface ApiDeps {
  config: ApiConfig;
  logger: Logger;
  orgs: OrgStore;
  keys: ApiKeyStore;
  policies: PolicyStore;
  activitySink: ActivitySink;
  /** Where export reads recorded activity. */
  activities: ActivityStore;
  /** Runs export jobs and bulk imports: in this process (embedded) or on Temporal. */
  jobs: JobRunner;
  engine: ScoreEngine;
  /** The model providers protected completions call. */
  upstream: UpstreamPort;
  upstreamRouting: UpstreamRouting;
  newId: (atMs?: number) => string;
  now: () => Date;
  /** Readiness of the stores and engines behind the API. */
  ready: () => Promise<boolean>;
  /**
   * Where requests, decisions and upstream calls are counted, served at `/metrics`; absent or
   * null: nothing is measured and `/metrics` is not served (GUARD_METRICS=false).
   */
  metrics?: GuardMetrics | null;
}
