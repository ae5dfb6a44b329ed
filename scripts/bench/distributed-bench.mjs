#!/usr/bin/env node
// What scoring over Redis costs: POST /guard/monitor on the embedded server (in-process scoring,
// the reference) and on one distributed API pod with 1, then 2 scorer processes, the same load
// side by side in one run. Bounded in time (about 2 minutes with the defaults); prints one JSON
// line per measurement and a summary.
//
//   npm run bench:distributed -- [--conc 1,32] [--duration 10] [--warmup 3] [--tool auto|wrk|autocannon]
//
// Setups, measured one after another (never at once), every process started before the first:
// - embedded:   services/standalone/dist/main.js, MODE=embedded, GUARD_WORKERS=1, SQLite;
// - 1 scorer:   services/api/dist/distributed/main.js (one pod) + services/scorer/dist/main.js;
// - 2 scorers:  the same pod, a second scorer started after the first setup's measurements.
// Body: the ~330-character prompt of bench:monitor, no policy (the preset), access log on.
// Target (issue 11): the Redis hop adds at most 1 ms at p50, read at concurrency 1.
//
// Engines: leases Redis, Kafka and Cassandra from infra/local/engines.sh (starting those that are
// down, stopping what it started) or takes REDIS_URL, KAFKA_BROKERS, CASSANDRA_CONTACT_POINTS.
// Each run has its own keyspace, activity topic and score request stream, removed at the end.
// Nothing consumes the activity topic: the API pod's publish (acked by the broker) is part of
// every request, as in production, but no ingester competes for the cores.
//
// CPU per request comes from /proc: the embedded server, the API pod, the scorers together, and
// Redis (shared with whatever else uses it, so an upper bound). The load generator (wrk, or
// autocannon in this process) runs on the same cores.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { BODIES, cpuMs, loadRunner, pickTool, startProcess, stopProcess } from './load.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENGINES = path.join(ROOT, 'infra/local/engines.sh');
const ENGINE_NAMES = ['redis', 'kafka', 'cassandra'];
const { values } = parseArgs({
  options: {
    conc: { type: 'string', default: '1,32' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    tool: { type: 'string', default: 'auto' },
  },
});
const CONCS = values.conc.split(',').map(Number);
const DURATION = Number(values.duration);
const WARMUP = Number(values.warmup);
const TARGET_ADDED_P50_MS = 1;

const tool = pickTool(values.tool);
const body = BODIES.prompt;
const run = process.pid;
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-bench-dist-'));
const key = `gk_bench_dist_${run}_${Math.random().toString(36).slice(2)}`;
const keyspace = `bench_dist_${run}`;
const topic = `guard.activity.bench.${run}`;
const stream = `guard:score:requests:bench:${run}`;
const children = [];

// ---------------------------------------------------------------------------------------------
// Engines

function leaseEngines() {
  const r = spawnSync('bash', [ENGINES, 'acquire', String(run), ...ENGINE_NAMES], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error('engines.sh acquire failed');
  const env = {};
  for (const line of r.stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1).trim();
  }
  for (const name of ['REDIS_URL', 'KAFKA_BROKERS', 'CASSANDRA_CONTACT_POINTS'])
    if (!env[name]) throw new Error(`engines.sh env gave no ${name}`);
  return env;
}
const releaseEngines = () =>
  spawnSync('bash', [ENGINES, 'release', String(run), ...ENGINE_NAMES], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });

/** Redis's PID when engines.sh runs it here (for its CPU time); undefined when external. */
function redisPid() {
  const r = spawnSync('bash', [ENGINES, 'status', 'redis'], { encoding: 'utf8' });
  const pid = Number(/\bpid (\d+)/.exec(r.stdout ?? '')?.[1]);
  return Number.isFinite(pid) ? pid : undefined;
}

/** Removes this run's keyspace, topic and request stream; best effort. */
async function dropRunState(engines) {
  const { default: cassandra } = await import('cassandra-driver');
  const { Kafka, logLevel } = await import('kafkajs');
  const { Redis } = await import('ioredis');
  const c = new cassandra.Client({
    contactPoints: engines.CASSANDRA_CONTACT_POINTS.split(','),
    localDataCenter: engines.CASSANDRA_LOCAL_DC ?? 'datacenter1',
  });
  await c.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
  await c.shutdown().catch(() => undefined);
  const admin = new Kafka({
    brokers: engines.KAFKA_BROKERS.split(','),
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin
    .connect()
    .then(() => admin.deleteTopics({ topics: [topic] }))
    .catch(() => undefined);
  await admin.disconnect().catch(() => undefined);
  const redis = new Redis(engines.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis
    .connect()
    .then(() => redis.del(stream))
    .catch(() => undefined);
  redis.disconnect();
}

// ---------------------------------------------------------------------------------------------
// Processes

const listeningPort = (line) =>
  line.includes('"guard listening"') ? JSON.parse(line).port : undefined;

async function start(name, script, env, ready, timeoutMs) {
  const p = await startProcess({
    name,
    cmd: process.execPath,
    args: [path.join(ROOT, script)],
    env,
    logFile: path.join(logDir, `${name}.log`),
    ready,
    quiet: true,
    timeoutMs,
  });
  children.push(p.child);
  return p;
}

async function waitReady(url, name, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} not ready (${url}) within ${timeoutMs / 1000} s`);
}

async function startScorer(name, env) {
  const { child, value: url } = await start(
    name,
    'services/scorer/dist/main.js',
    // One scoring thread, as in test:distributed: a short prompt is scored on the main thread.
    { ...env, PORT: '0', GUARD_SCORE_THREADS: '1' },
    (line) => (line.includes('"probes listening"') ? JSON.parse(line).url : undefined),
  );
  await waitReady(`${url}/readyz`, name);
  return child;
}

async function sanity(url) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const b = await r.json();
  if (r.status !== 200 || b.error)
    throw new Error(
      `sanity request to ${url} failed: ${r.status} ${JSON.stringify(b).slice(0, 300)}`,
    );
  return b;
}

// ---------------------------------------------------------------------------------------------
// Measurement

const load = loadRunner({ tool, body, key, dir: logDir, exactLatency: true });
const round3 = (x) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null);

/** Warm-up, then `DURATION` s at `conc`; CPU per request of each process group in `cpu`. */
async function measure(setup, scorers, url, conc, cpu) {
  if (WARMUP > 0) await load(conc, WARMUP, url);
  const before = Object.fromEntries(Object.entries(cpu).map(([k, pids]) => [k, sum(pids)]));
  const from = Date.now();
  const r = await load(conc, DURATION, url);
  const to = Date.now();
  const perReq = {};
  for (const [k, pids] of Object.entries(cpu))
    perReq[`${k}_cpu_ms_per_req`] = round3((sum(pids) - before[k]) / r.requests);
  const line = {
    bench: 'distributed',
    setup,
    scorers,
    tool,
    conc,
    duration_s: DURATION,
    ...r,
    rps: Math.round(r.rps),
    ...perReq,
  };
  console.error(`measured: ${setup}, ${scorers} scorer(s), conc ${conc}: ${line.rps} req/s`);
  return { line, from, to };
}
/**
 * Adds to each measurement the p50/p99 of the activities' own `latency_ms` recorded in its
 * window: from the verb's start to the verdict (policy resolution and scoring, in-process or
 * through Redis and a scorer), without HTTP, auth, the response or the activity write.
 */
function addScoredLatency(measured, activities) {
  for (const m of measured) {
    const lat = activities
      .filter((a) => a.at >= m.from && a.at <= m.to)
      .map((a) => a.latency_ms)
      .sort((x, y) => x - y);
    m.line.scored_n = lat.length;
    m.line.scored_p50_ms = round3(pct(lat, 50));
    m.line.scored_p99_ms = round3(pct(lat, 99));
  }
}
function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const slim = (a) => ({ at: Date.parse(a.created_at), latency_ms: a.latency_ms });

/** Every activity the embedded server recorded, through its export API. */
async function embeddedActivities(base) {
  const out = [];
  let cursor;
  for (;;) {
    const q = new URLSearchParams({ limit: '10000', ...(cursor ? { cursor } : {}) });
    const r = await fetch(`${base}/activity/export?${q}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    if (!r.ok) throw new Error(`activity export: ${r.status}`);
    const page = await r.json();
    out.push(...page.activities.map(slim));
    if (!page.has_more || !page.next_cursor) return out;
    cursor = page.next_cursor;
  }
}

/** Every activity the API pod published, read back from this run's topic. */
async function publishedActivities(engines) {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({
    brokers: engines.KAFKA_BROKERS.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
  const consumer = kafka.consumer({ groupId: `bench-dist-${run}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const out = [];
  await new Promise((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error('reading the activity topic took over 60 s')),
      60_000,
    );
    void consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) if (m.value) out.push(slim(JSON.parse(m.value.toString())));
        if (out.length >= total) {
          clearTimeout(t);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  const groups = kafka.admin();
  await groups
    .connect()
    .then(() => groups.deleteGroups([`bench-dist-${run}`]))
    .catch(() => undefined);
  await groups.disconnect().catch(() => undefined);
  return out;
}

function sum(pids) {
  return pids.reduce((s, pid) => s + cpuMs(pid), 0);
}

// ---------------------------------------------------------------------------------------------
// Main

let engines;
const onSignal = () => {
  for (const c of children) c.kill('SIGKILL');
  releaseEngines();
  process.exit(130);
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

const results = [];
let sample;
try {
  engines = leaseEngines();
  const base = { ...process.env };
  delete base.TEMPORAL_ADDRESS; // export jobs run in the API pod; no jobs worker needed
  Object.assign(base, {
    PORT: '0',
    HOST: '127.0.0.1',
    GUARD_LOG_LEVEL: process.env.GUARD_LOG_LEVEL ?? 'info',
    GUARD_ACCESS_LOG: 'true',
  });
  const dist = {
    ...base,
    REDIS_URL: engines.REDIS_URL,
    KAFKA_BROKERS: engines.KAFKA_BROKERS,
    CASSANDRA_CONTACT_POINTS: engines.CASSANDRA_CONTACT_POINTS,
    CASSANDRA_LOCAL_DC: engines.CASSANDRA_LOCAL_DC ?? 'datacenter1',
    CASSANDRA_KEYSPACE: keyspace,
    KAFKA_ACTIVITY_TOPIC: topic,
    GUARD_SCORE_REQUEST_STREAM: stream,
  };

  const embedded = await start(
    'embedded',
    'services/standalone/dist/main.js',
    {
      ...base,
      MODE: 'embedded',
      GUARD_WORKERS: '1',
      GUARD_DATA_DIR: fs.mkdtempSync(path.join(logDir, 'data-')),
      GUARD_BOOTSTRAP_ADMIN_KEY: key,
    },
    listeningPort,
  );
  // The first start of a keyspace applies the Cassandra migrations: allow for it.
  const api = await start(
    'api',
    'services/api/dist/distributed/main.js',
    { ...dist, GUARD_BOOTSTRAP_ADMIN_KEY: key },
    listeningPort,
    180_000,
  );
  const scorer1 = await startScorer('scorer-1', dist);
  const embeddedUrl = `http://127.0.0.1:${embedded.value}/guard/monitor`;
  const apiUrl = `http://127.0.0.1:${api.value}/guard/monitor`;
  sample = await sanity(embeddedUrl);
  await sanity(apiUrl);
  const redis = redisPid();
  const redisCpu = redis ? { redis: [redis] } : {};

  const embeddedRuns = [];
  for (const conc of CONCS)
    embeddedRuns.push(
      await measure('embedded', 0, embeddedUrl, conc, { server: [embedded.child.pid] }),
    );
  const distRuns = [];
  for (const conc of CONCS)
    distRuns.push(
      await measure('distributed', 1, apiUrl, conc, {
        server: [api.child.pid],
        scorer: [scorer1.pid],
        ...redisCpu,
      }),
    );
  const scorer2 = await startScorer('scorer-2', dist);
  for (const conc of CONCS)
    distRuns.push(
      await measure('distributed', 2, apiUrl, conc, {
        server: [api.child.pid],
        scorer: [scorer1.pid, scorer2.pid],
        ...redisCpu,
      }),
    );

  addScoredLatency(embeddedRuns, await embeddedActivities(`http://127.0.0.1:${embedded.value}`));
  // The pod's sink flushes on SIGTERM: stop it before reading the topic back.
  await stopProcess(api.child);
  addScoredLatency(distRuns, await publishedActivities(engines));
  for (const m of [...embeddedRuns, ...distRuns]) {
    results.push(m.line);
    console.log(JSON.stringify(m.line));
  }
} finally {
  await Promise.all(children.map((c) => stopProcess(c)));
  if (engines) await dropRunState(engines);
  releaseEngines();
}

// ---------------------------------------------------------------------------------------------
// Summary

const load1 = os.loadavg().map((x) => x.toFixed(1));
console.log(
  `\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, ` +
    `load average ${load1.join(' ')}; tool ${tool}; ${WARMUP} s warm-up + ${DURATION} s per line; ` +
    `sample: violation=${sample?.violation}; logs: ${logDir}`,
);
const name = (r) =>
  r.setup === 'embedded'
    ? 'embedded (reference)'
    : `distributed, ${r.scorers} scorer${r.scorers > 1 ? 's' : ''}`;
const ms = (x) => (x === null ? 'n/a' : `${x} ms`);
for (const r of results)
  console.log(
    `${name(r).padEnd(24)} conc ${String(r.conc).padStart(3)}: ${String(r.rps).padStart(5)} req/s, ` +
      `p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, errors ${r.errors}; ` +
      `scoring p50 ${ms(r.scored_p50_ms)}, p99 ${ms(r.scored_p99_ms)}; CPU/req: ` +
      (r.setup === 'embedded'
        ? `server ${ms(r.server_cpu_ms_per_req)}`
        : `api ${ms(r.server_cpu_ms_per_req)}, scorers ${ms(r.scorer_cpu_ms_per_req)}` +
          (r.redis_cpu_ms_per_req !== undefined ? `, redis ${ms(r.redis_cpu_ms_per_req)}` : '')),
  );
for (const conc of CONCS) {
  const ref = results.find((r) => r.setup === 'embedded' && r.conc === conc);
  for (const r of results.filter((x) => x.setup !== 'embedded' && x.conc === conc)) {
    const added = round3(r.p50_ms - ref.p50_ms);
    const hop = round3(r.scored_p50_ms - ref.scored_p50_ms);
    const verdict =
      conc === 1
        ? `; target <= ${TARGET_ADDED_P50_MS} ms: ${hop <= TARGET_ADDED_P50_MS ? 'met' : 'NOT met'} for the hop, ` +
          `${added <= TARGET_ADDED_P50_MS ? 'met' : 'NOT met'} end to end`
        : '';
    console.log(
      `added p50 at conc ${conc}, ${name(r)} over embedded: end to end ${added} ms ` +
        `(${r.p50_ms} vs ${ref.p50_ms}), scoring (the Redis hop) ${hop} ms ` +
        `(${r.scored_p50_ms} vs ${ref.scored_p50_ms}); req/s ratio ${(r.rps / ref.rps).toFixed(2)}${verdict}`,
    );
  }
}
