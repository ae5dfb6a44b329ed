import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import { createLogger, newId } from '@guard/platform';
import { GuardMetrics } from '@guard/platform/metrics';
import {
  bootstrapIfEmpty,
  createJobActivities,
  createApiKey,
  createOrg,
  type AuthDeps,
  type OrgKind,
  type Role,
} from '@guard/domain';
import { buildOpenApiDocument } from '@guard/contracts';
import { createDefaultEngine, createLocalEngine, type ScoreEngine } from '@guard/scoring';
import { createStubDetectors } from '@guard/scoring/testing/stub-detectors';
// By path: the package index also loads the SQLite, Kafka and Temporal adapters.
import {
  MemoryActivityStore,
  MemoryApiKeyStore,
  MemoryJobStore,
  MemoryOrgStore,
  MemoryPolicyStore,
} from '@guard/adapters/memory/index';
import { InProcessJobRunner } from '@guard/adapters/jobs/in-process-job-runner';
import { BatchingActivitySink } from '@guard/adapters/activity/batching-activity-sink';
import { createHttpUpstream } from '@guard/adapters/upstream/http-upstream';
import { createApp } from '../app.js';
import type { ApiConfig, ApiDeps } from '../deps.js';
import { ResponseContract } from './response-contract.js';

/**
 * The API in this process, over the in-memory twins of the stores (they pass the same contract
 * suites as the SQLite adapters): what test/e2e does by starting the compiled server, without
 * the process, the database file or the seconds. For HTTP behaviour; what needs a real process
 * (restart, workers, signals) stays in test/e2e.
 */

export const DEFAULT_TEST_CONFIG: ApiConfig = {
  // The standalone defaults (services/standalone/src/config.ts).
  bodyLimitBytes: 1024 * 1024,
  maxJsonDepth: 64,
  version: '0.0.0-test',
  accessLog: false,
  maxMessages: 500,
  maxTextChars: 200_000,
  failMode: 'closed',
  excerptChars: 200,
  stream: { mode: 'window', windowChars: 400, overlapChars: 100 },
  outputContextChars: 1000,
  activitySettleMs: 0,
};

let learned: ScoreEngine | undefined;

/**
 * The engine with the learned detectors. Loading the weights takes about a second, so it is built
 * once per test file (each file gets its own module instance) and shared by its servers.
 */
export function learnedEngine(): ScoreEngine {
  return (learned ??= createDefaultEngine());
}

/** Phrase-table detectors: for tests where verdicts are not the point. */
export function stubEngine(): ScoreEngine {
  return createLocalEngine({ detectors: createStubDetectors(), warmup: false });
}

export type KeyHeader = 'bearer' | 'x-api-key' | 'x-goog-api-key';

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Sent as is instead of `JSON.stringify(body)`: malformed JSON, empty bodies. */
  raw?: string;
  /** Default `application/json` when there is a body; `null` sends none. */
  contentType?: string | null;
}

export interface ApiResponse {
  status: number;
  /** Parsed JSON, or the text when the answer is not JSON. */
  body: unknown;
  text: string;
  headers: Headers;
}

export interface ApiClient {
  call(
    method: string,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<ApiResponse>;
  get(path: string, options?: RequestOptions): Promise<ApiResponse>;
  post(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse>;
  put(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse>;
  del(path: string, options?: RequestOptions): Promise<ApiResponse>;
}

/**
 * A small JSON client bound to a base URL and a key. With a contract, every answer is checked
 * against the OpenAPI document and the zod schemas behind it before the test sees it.
 */
export function apiClient(
  baseUrl: string,
  key: string | null,
  options: { header?: KeyHeader; contract?: ResponseContract | null } = {},
): ApiClient {
  const header = options.header ?? 'bearer';
  const contract = options.contract ?? null;
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    opts: RequestOptions = {},
  ): Promise<ApiResponse> => {
    const headers: Record<string, string> = {};
    if (key !== null) {
      if (header === 'bearer') headers.authorization = `Bearer ${key}`;
      else headers[header] = key;
    }
    const payload = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const contentType = opts.contentType === undefined ? 'application/json' : opts.contentType;
    if (payload !== undefined && contentType !== null) headers['content-type'] = contentType;
    Object.assign(headers, opts.headers);
    const res = await fetch(baseUrl + path, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    if (/^application\/json\b/.test(res.headers.get('content-type') ?? '')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON after all: keep the text, the contract check says what was wrong with it.
      }
    }
    contract?.check({
      method,
      path,
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: parsed,
    });
    return { status: res.status, body: parsed, text, headers: res.headers };
  };
  return {
    call,
    get: (p, o) => call('GET', p, undefined, o),
    post: (p, b, o) => call('POST', p, b, o),
    put: (p, b, o) => call('PUT', p, b, o),
    del: (p, o) => call('DELETE', p, undefined, o),
  };
}

export interface MemoryStores {
  orgs: MemoryOrgStore;
  keys: MemoryApiKeyStore;
  policies: MemoryPolicyStore;
  activities: MemoryActivityStore;
  jobs: MemoryJobStore;
}

export interface TestOrg {
  orgId: string;
  adminKey: string;
  adminKeyId: string;
  memberKey: string;
  memberKeyId: string;
}

export interface InProcessOptions {
  /** `stub` (default): phrase-table detectors; `learned`: the shipped models; or any engine. */
  engine?: 'stub' | 'learned' | ScoreEngine;
  config?: Partial<ApiConfig>;
  ready?: () => Promise<boolean>;
  /** Level of the app's own log lines, collected in `logs` (default `info`). */
  logLevel?: string;
  /**
   * Where protected completions go: every provider at this base URL (a fake provider, in tests);
   * by default a closed local port, so that an unexpected model call fails fast.
   */
  upstreamUrl?: string;
  /** What `/metrics` serves: by default a registry of this server's own; null serves none. */
  metrics?: GuardMetrics | null;
}

export interface InProcessApi {
  url: string;
  /** The bootstrap key: a staff key, admin of the default org (as at first start). */
  adminKey: string;
  defaultOrgId: string;
  app: Express;
  deps: ApiDeps;
  stores: MemoryStores;
  /** The OpenAPI document the app serves, as a checker of answers. */
  contract: ResponseContract;
  /** Every line the app logged, as JSON text. */
  logs: string[];
  /** A client with this key whose every answer is checked against the contract. */
  client(key: string | null, header?: KeyHeader): ApiClient;
  /** A new org with an admin and a member key, made through the domain verbs (as the CLI does). */
  makeOrg(name: string, kind?: OrgKind): Promise<TestOrg>;
  /** A new key of an existing org, made through the domain verbs. */
  makeKey(orgId: string, role: Role, userId: string): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

export async function startInProcessApi(options: InProcessOptions = {}): Promise<InProcessApi> {
  const config: ApiConfig = { ...DEFAULT_TEST_CONFIG, ...options.config };
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: options.logLevel ?? 'info', logContent: false }, sink);
  const stores: MemoryStores = {
    orgs: new MemoryOrgStore(),
    keys: new MemoryApiKeyStore(),
    policies: new MemoryPolicyStore(),
    activities: new MemoryActivityStore(),
    jobs: new MemoryJobStore(),
  };
  const jobs = new InProcessJobRunner({
    store: stores.jobs,
    activities: createJobActivities({
      jobs: stores.jobs,
      activities: stores.activities,
      policies: stores.policies,
      now: () => new Date(),
    }),
    logger: logger.child({ component: 'jobs' }),
  });
  const engine =
    options.engine === 'learned'
      ? learnedEngine()
      : options.engine === 'stub' || options.engine === undefined
        ? stubEngine()
        : options.engine;
  const upstreamBase = options.upstreamUrl ?? 'http://127.0.0.1:9';
  const upstream = createHttpUpstream({ headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000 });
  const deps: ApiDeps = {
    config,
    logger,
    orgs: stores.orgs,
    keys: stores.keys,
    policies: stores.policies,
    activities: stores.activities,
    jobs,
    activitySink: new BatchingActivitySink(stores.activities, 1000, (err, activityId) => {
      logger.error({ err, activity_id: activityId }, 'activity record could not be stored');
    }),
    engine,
    upstream,
    upstreamRouting: {
      providers: {
        openai: { baseUrl: `${upstreamBase}/v1`, apiKey: 'test-openai-key' },
        anthropic: { baseUrl: upstreamBase, apiKey: 'test-anthropic-key' },
        gemini: { baseUrl: upstreamBase, apiKey: 'test-gemini-key' },
      },
      routes: [],
    },
    newId: (atMs?: number) => newId(atMs),
    now: () => new Date(),
    ready: options.ready ?? (async () => true),
    // Without the Node process metrics: one test file starts many servers.
    metrics:
      options.metrics === undefined ? new GuardMetrics({ defaultMetrics: false }) : options.metrics,
  };
  const auth: AuthDeps = { orgs: deps.orgs, keys: deps.keys, newId: deps.newId, now: deps.now };
  const boot = await bootstrapIfEmpty(auth, undefined);
  if (!boot) throw new Error('a fresh memory store already had keys');

  const makeKey = async (orgId: string, role: Role, userId: string) => {
    const made = await createApiKey(auth, { orgId, userId, role });
    return { key: made.key, id: made.record.id };
  };

  const app = createApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const contract = new ResponseContract(buildOpenApiDocument(config.version));

  return {
    url,
    adminKey: boot.key,
    defaultOrgId: boot.org.id,
    app,
    deps,
    stores,
    contract,
    logs,
    client: (key, header) => apiClient(url, key, { contract, ...(header ? { header } : {}) }),
    makeOrg: async (name, kind = 'standard') => {
      const org = await createOrg(auth, name, kind);
      const admin = await makeKey(org.id, 'admin', `${name}-admin`);
      const member = await makeKey(org.id, 'member', `${name}-member`);
      return {
        orgId: org.id,
        adminKey: admin.key,
        adminKeyId: admin.id,
        memberKey: member.key,
        memberKeyId: member.id,
      };
    },
    makeKey,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await jobs.close();
      await deps.activitySink.flush();
      await upstream.close();
    },
  };
}
