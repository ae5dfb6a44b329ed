import cluster from 'node:cluster';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
} from 'prom-client';

/** What one recorded decision counts as (docs/metrics.md). */
export type DecisionOutcome = 'blocked' | 'observed' | 'passed' | 'error';

export interface DecisionMetric {
  endpoint: string;
  /** null: inline rules only. */
  policyId: string | null;
  outcome: DecisionOutcome;
  /** The rules found violated, each once per analysis that violated it. */
  violations: { rule: string; mode: string }[];
  /** Set when a scoring failure was answered by the fail mode. */
  failMode: 'open' | 'closed' | null;
}

export interface MetricsOptions {
  /** The Node process metrics (`process_*`, `nodejs_*`): on in every role, off in tests. */
  defaultMetrics?: boolean;
}

// Request latencies run from under a millisecond (health, cached reads) to a minute (completions).
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const UPSTREAM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
// Rule names are policy authors' text: bounded so that one odd name cannot bloat every scrape.
const MAX_LABEL_CHARS = 64;

// A value read at scrape time that takes longer is skipped: Prometheus's own timeout is ~10 s.
const COLLECT_TIMEOUT_MS = 2000;

const label = (v: string) => (v.length > MAX_LABEL_CHARS ? v.slice(0, MAX_LABEL_CHARS) : v);

/**
 * The Prometheus metrics of one process: a registry, the counters and histograms the HTTP API
 * records as it goes, and values a role reads only when scraped (queue depth, consumer counters).
 * Names are in docs/metrics.md.
 */
export class GuardMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly decisions: Counter<'endpoint' | 'policy_id' | 'outcome'>;
  private readonly ruleViolations: Counter<'rule' | 'mode' | 'policy_id'>;
  private readonly failModes: Counter<'mode'>;
  private readonly upstreamDuration: Histogram<'provider' | 'status'>;

  constructor(options: MetricsOptions = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: 'guard_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'guard_http_request_duration_seconds',
      help: 'Time from a request arriving to its answer being sent, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.decisions = new Counter({
      name: 'guard_decisions_total',
      help: 'Decisions recorded as activity, by endpoint, policy and outcome (blocked, observed, passed, error).',
      labelNames: ['endpoint', 'policy_id', 'outcome'],
      registers,
    });
    this.ruleViolations = new Counter({
      name: 'guard_rule_violations_total',
      help: 'Rules found violated in recorded decisions, by rule name, mode and policy.',
      labelNames: ['rule', 'mode', 'policy_id'],
      registers,
    });
    this.failModes = new Counter({
      name: 'guard_fail_mode_total',
      help: 'Scoring failures answered by the fail mode (open or closed).',
      labelNames: ['mode'],
      registers,
    });
    // Both series exist from the start, so that an alert on their rate has a zero to compare.
    for (const mode of ['open', 'closed']) this.failModes.inc({ mode }, 0);
    this.upstreamDuration = new Histogram({
      name: 'guard_upstream_duration_seconds',
      help: 'Time until a model provider answered (for a stream: its headers), by provider and status.',
      labelNames: ['provider', 'status'],
      buckets: UPSTREAM_BUCKETS,
      registers,
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition of every metric, collect-time values read now. */
  render(): Promise<string> {
    return this.renderAll ? this.renderAll() : this.registry.metrics();
  }

  /** Set in a cluster worker (`joinClusterMetrics`): a scrape answers for every worker. */
  private renderAll: (() => Promise<string>) | null = null;

  /** @internal `joinClusterMetrics` */
  setRenderAll(render: () => Promise<string>): void {
    this.renderAll = render;
  }

  /** `route` is the route pattern (`/policies/:policy_id`), never the raw path. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  recordDecision(d: DecisionMetric): void {
    const policyId = d.policyId ?? 'none';
    this.decisions.inc({
      endpoint: d.endpoint,
      policy_id: policyId,
      outcome: d.outcome,
    });
    for (const v of d.violations) {
      this.ruleViolations.inc({ rule: label(v.rule), mode: v.mode, policy_id: policyId });
    }
    if (d.failMode) this.failModes.inc({ mode: d.failMode });
  }

  /** `status`: the provider's HTTP status, `ok`, or why there was no answer. */
  observeUpstream(provider: string, status: string, seconds: number): void {
    this.upstreamDuration.observe({ provider, status }, seconds);
  }

  /**
   * A gauge read when scraped. A read that fails or takes over 2 s keeps the last value, so that
   * one slow Redis answer does not fail or stall the whole scrape. Registering a name again replaces the earlier reader
   * (a component restarted in the same process).
   */
  gaugeFrom(name: string, help: string, read: () => number | Promise<number>): void {
    this.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), COLLECT_TIMEOUT_MS);
        });
        try {
          const v = await Promise.race([Promise.resolve(read()), late]);
          if (v !== null) this.set(v);
        } catch {
          // Kept: the last value read.
        } finally {
          clearTimeout(timer);
        }
      },
    });
  }

  /**
   * The counters a component keeps in one stats object, each key that is listed served under its
   * name and help and read when scraped.
   */
  countersOf<S extends object>(
    stats: S,
    counters: { [K in keyof S as S[K] extends number ? K : never]?: readonly [string, string] },
  ): void {
    for (const [key, entry] of Object.entries(counters) as [keyof S, [string, string]][]) {
      this.counterFrom(entry[0], entry[1], () => stats[key] as number);
    }
  }

  /** A counter a component already keeps (a plain number that only grows), read when scraped. */
  counterFrom(name: string, help: string, read: () => number): void {
    this.registry.removeSingleMetric(name);
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        const v = read();
        if (v > 0) this.inc(v);
      },
    });
  }
}

let processWide: GuardMetrics | null = null;

/**
 * The one registry of this process, with the Node process metrics: what every composition root
 * records into and `/metrics` serves. Tests make their own with `new GuardMetrics()`.
 */
export function processMetrics(): GuardMetrics {
  return (processWide ??= new GuardMetrics());
}

// The standalone server with GUARD_WORKERS > 1: workers share one port, so a scrape reaches one
// of them. The worker that takes it asks the primary, which gathers every worker's registry
// (prom-client's AggregatorRegistry: counters and histograms summed, process gauges as prom-client
// aggregates each) and answers with the whole cluster's exposition.
const ASK = 'guard:metrics:ask';
const ANSWER = 'guard:metrics:answer';
// Above the collect timeout of a slow gauge, below Prometheus's scrape timeout.
const CLUSTER_SCRAPE_TIMEOUT_MS = 5_000;

interface MetricsMessage {
  type?: string;
  id?: number;
  text?: string;
  error?: string;
}

/** In the primary: answers workers asking for the cluster's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, msg: MetricsMessage) => {
    if (msg?.type !== ASK) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: ANSWER, id: msg.id, text }),
      (err: unknown) =>
        worker.send({
          type: ANSWER,
          id: msg.id,
          error: err instanceof Error ? err.message : String(err),
        }),
    );
  });
}

/**
 * In a cluster worker: offers `metrics`' registry to the primary's aggregation, and makes its
 * `render` answer with the whole cluster. When the primary does not answer in time, the scrape
 * fails (a partial answer would read as counters going down).
 */
export function joinClusterMetrics(metrics: GuardMetrics): void {
  AggregatorRegistry.setRegistries([metrics.registry]);
  // Constructing one installs prom-client's listener that answers the primary's requests.
  new AggregatorRegistry();
  let next = 0;
  const waiting = new Map<number, { resolve: (t: string) => void; reject: (e: Error) => void }>();
  process.on('message', (msg: MetricsMessage) => {
    if (msg?.type !== ANSWER || msg.id === undefined) return;
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.text !== undefined) w.resolve(msg.text);
    else w.reject(new Error(`cluster metrics: ${msg.error ?? 'no answer'}`));
  });
  metrics.setRenderAll(
    () =>
      new Promise<string>((resolve, reject) => {
        const id = next++;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(
            new Error(
              `cluster metrics: the primary did not answer in ${CLUSTER_SCRAPE_TIMEOUT_MS} ms`,
            ),
          );
        }, CLUSTER_SCRAPE_TIMEOUT_MS);
        waiting.set(id, {
          resolve: (t) => {
            clearTimeout(timer);
            resolve(t);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        process.send?.({ type: ASK, id });
      }),
  );
}
