#!/usr/bin/env node
// Score requests per second one scorer core sustains: the sizing number for docs/operations.md.
//
//   npm run bench:scorer -- [--duration 10] [--warmup 3] [--rounds 3] [--conc 64] [--text-kb 1]
//                           [--threads 0,1] [--untraced 0] [--redis own|engines]
//
// Each round measures, one after another (never at once), on core 1 (`taskset -c 1`):
// - floor:      the scoring core in one process (createServingEngine, 0 threads: the scorer's
//               own scoring), called directly at the same concurrency, no Redis: the most one
//               core can score;
// - scorer, N threads: one scorer process (services/standalone/dist/role.js, ROLE=scorer) with
//               GUARD_SCORE_THREADS=N, fed by the real RedisScoreClient of the API pod running in
//               this process. With 1 thread GUARD_SCORE_INLINE_CHARS=0 sends every request to the
//               thread (else a 1 KB prompt stays on the main thread, as with 0): the main thread
//               does the Redis I/O, the scoring thread the scoring, both on the one core.
//               Tracing as the role defaults it (on in distributed mode, one span per request;
//               nothing listens on the OTLP endpoint here, so exports fail and are dropped);
// - scorer, N threads, no tracing: the same with OTEL_SDK_DISABLED=true, for each N of --untraced.
// This process (the client) and Redis run on core 0 (`--redis own`: a redis-server of its own on a
// free port; `--redis engines`: the one of infra/local/engines.sh, leased, not pinned).
//
// Requests: what POST /guard/monitor sends for the org's default policy (the preset Basic Content
// Safety, resolved by resolvePolicies like the API), built from a fixed mix of benign prompts of
// about --text-kb KB, 1 in 4 with a system message; every text ends in a number of its own (the
// detectors remember their last texts). The same seeded sequence in every setup.
// Latency: from score() to its result, per call (closed loop: `conc` calls always in flight, so
// at saturation it is mostly queueing). CPU per request: /proc utime+stime of the scorer process
// (all its threads), and of Redis; the floor's is its own process.cpuUsage(), which includes
// building the requests (a string concatenation each). `core busy` = req/s x CPU/req: below
// ~95% the core was not the scorer's alone (other work on the machine) or the client side lagged;
// `req/s per busy core` = 1000 / CPU ms per request, what the scorer does with a whole core.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ordinaryText, seeded as rng } from './ordinary-requests.mjs';
import { fileURLToPath } from 'node:url';
import { canPin, cpuMs, startProcess, stopProcess } from './load.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SELF = fileURLToPath(import.meta.url);
const ENGINES = path.join(ROOT, 'infra/local/engines.sh');
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    conc: { type: 'string', default: '64' },
    'text-kb': { type: 'string', default: '1' },
    threads: { type: 'string', default: '0,1' },
    untraced: { type: 'string', default: '0' },
    redis: { type: 'string', default: 'own' },
    'floor-child': { type: 'boolean', default: false },
  },
});
const DURATION = Number(values.duration);
const WARMUP = Number(values.warmup);
const ROUNDS = Number(values.rounds);
const CONC = Number(values.conc);
const TEXT_CHARS = Math.round(Number(values['text-kb']) * 1024);
const list = (v) => (v === '' ? [] : v.split(',').map(Number));
const SCORERS = [
  ...list(values.threads).map((threads) => ({ threads, tracing: true })),
  ...list(values.untraced).map((threads) => ({ threads, tracing: false })),
];
const SCORER_CORE = '1';
const DRIVER_CORE = '0';

// ---------------------------------------------------------------------------------------------
// Requests

const SYSTEM =
  'You are a helpful assistant for a consumer app. Answer clearly and briefly, and ask when unsure.';

/** Score requests as the API builds them for /guard/monitor under the default policy. */
async function requestFactory(seed) {
  const { resolvePolicies, policyScoreFields } = await import('@guard/domain');
  // No policy in the request and no org default: the preset Basic Content Safety, as the API.
  const policy = await resolvePolicies(
    { policies: { get: async () => undefined }, orgs: { get: async () => null } },
    { org_id: 'bench-org' },
    { inline: [] },
  );
  const fields = { ...policyScoreFields(policy), reasoning_mode: 'off' };
  const next = rng(seed);
  let n = 0;
  return () => {
    n++;
    const tag = ` (ref ${seed.toString(36)}-${n.toString(36)})`;
    const text = ordinaryText(next, TEXT_CHARS - tag.length) + tag;
    const messages =
      next() < 0.25
        ? [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: text.slice(SYSTEM.length + 1) },
          ]
        : [{ role: 'user', content: text }];
    return { messages, ...fields };
  };
}

// ---------------------------------------------------------------------------------------------
// A closed loop: `conc` calls always in flight

function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const r2 = (x) => Math.round(x * 100) / 100;

async function drive(score, nextRequest, seconds) {
  const lat = [];
  let errors = 0;
  let flagged = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < until) {
      const req = nextRequest();
      const t0 = performance.now();
      try {
        const r = await score(req);
        if (r.error) errors++;
        else lat.push(performance.now() - t0);
        if (r.violation > 0) flagged++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONC }, loop));
  const elapsed = (performance.now() - started) / 1000;
  const sorted = Float64Array.from(lat).sort();
  return {
    requests: lat.length,
    errors,
    flagged,
    rps: Math.round(lat.length / elapsed),
    p50_ms: r2(pct(sorted, 50)),
    p99_ms: r2(pct(sorted, 99)),
  };
}

// ---------------------------------------------------------------------------------------------
// The floor, in a child process of its own on the scorer's core

if (values['floor-child']) {
  const { createServingEngine } = await import('@guard/scoring/pool/serving-engine');
  // Without the encoder's cache, as the scorer below: sizing is for texts never seen before.
  const scoring = createServingEngine({
    threads: 0,
    timeoutMs: 10_000,
    inlineChars: 4000,
    encoder: { mode: 'cascade', threads: 1, cache: 0 },
  });
  const score = (req) => scoring.engine.score(req);
  const seed = Number(process.env.BENCH_SEED);
  if (WARMUP > 0) await drive(score, await requestFactory(seed + 1000), WARMUP);
  const nextRequest = await requestFactory(seed);
  const cpu0 = process.cpuUsage();
  const r = await drive(score, nextRequest, DURATION);
  const cpu = process.cpuUsage(cpu0);
  await scoring.close();
  const cpuMsTotal = (cpu.user + cpu.system) / 1000;
  console.log(JSON.stringify({ floor_result: { ...r, cpu_ms_per_req: cpuMsTotal / r.requests } }));
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Processes

if (!canPin()) throw new Error('taskset is needed (util-linux) to pin the processes to cores');
if (os.cpus().length < 2) throw new Error('two cores at least: the scorer on 1, the rest on 0');
const pin = (pid) =>
  spawnSync('taskset', ['-a', '-p', '-c', DRIVER_CORE, String(pid)], { stdio: 'ignore' });
pin(process.pid);

const run = process.pid;
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-bench-scorer-'));
const children = [];
const redisMode = values.redis;
let redisUrl;
let redisProc;
let redisPidForCpu;

async function startRedis() {
  if (redisMode === 'engines') {
    const r = spawnSync('bash', [ENGINES, 'acquire', String(run), 'redis'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (r.status !== 0) throw new Error('engines.sh acquire redis failed');
    redisUrl = /^REDIS_URL=(.*)$/m.exec(r.stdout)?.[1]?.trim();
    if (!redisUrl) throw new Error('engines.sh env gave no REDIS_URL');
    const st = spawnSync('bash', [ENGINES, 'status', 'redis'], { encoding: 'utf8' });
    const pid = Number(/\bpid (\d+)/.exec(st.stdout ?? '')?.[1]);
    redisPidForCpu = Number.isFinite(pid) ? pid : undefined;
    return;
  }
  const { freePort, startRedisServer } = await import('@guard/testing/redis-server');
  const port = await freePort();
  redisProc = startRedisServer(port);
  pin(redisProc.pid);
  redisPidForCpu = redisProc.pid;
  redisUrl = `redis://127.0.0.1:${port}`;
  const { Redis } = await import('ioredis');
  const until = Date.now() + 10_000;
  for (;;) {
    const c = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
    const ok = await c.connect().then(
      () => c.ping(),
      () => false,
    );
    c.disconnect();
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server on ${port} not up in 10 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopRedis() {
  if (redisProc) {
    const { stopRedisServer } = await import('@guard/testing/redis-server');
    await stopRedisServer(redisProc);
  }
  if (redisMode === 'engines')
    spawnSync('bash', [ENGINES, 'release', String(run), 'redis'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
}

async function startScorer(name, stream, threads, tracing) {
  const { child, value: url } = await startProcess({
    name,
    cmd: 'taskset',
    args: [
      '-c',
      SCORER_CORE,
      process.execPath,
      path.join(ROOT, 'services/standalone/dist/role.js'),
    ],
    env: {
      ...process.env,
      MODE: 'distributed',
      ROLE: 'scorer',
      REDIS_URL: redisUrl,
      GUARD_SCORE_REQUEST_STREAM: stream,
      GUARD_SCORE_THREADS: String(threads),
      ...(threads > 0 ? { GUARD_SCORE_INLINE_CHARS: '0' } : {}),
      // Its requests are distinct texts; the cache off keeps the numbers those of new texts.
      GUARD_ENCODER_CACHE: '0',
      ...(tracing ? {} : { OTEL_SDK_DISABLED: 'true' }),
      PORT: '0',
      HOST: '127.0.0.1',
      GUARD_LOG_LEVEL: 'info',
    },
    logFile: path.join(logDir, `${name}.log`),
    ready: (line) => (line.includes('"probes listening"') ? JSON.parse(line).url : undefined),
    quiet: true,
  });
  children.push(child);
  const until = Date.now() + 30_000;
  while (
    !(await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > until) throw new Error(`${name} not ready in 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

// ---------------------------------------------------------------------------------------------
// Measurements

async function measureScorer(round, { threads, tracing }) {
  const { RedisScoreClient } = await import('@guard/adapters/redis/redis-score-client');
  const name = `scorer-r${round}-t${threads}${tracing ? '' : '-untraced'}`;
  const stream = `guard:score:requests:bench-capacity:${run}:${name}`;
  const scorer = await startScorer(name, stream, threads, tracing);
  const client = new RedisScoreClient({ redisUrl, timeoutMs: 10_000, requestStream: stream });
  await client.start();
  try {
    const score = (req) => client.score(req);
    if (WARMUP > 0) await drive(score, await requestFactory(round + 1000), WARMUP);
    const nextRequest = await requestFactory(round);
    const s0 = cpuMs(scorer.pid);
    const d0 = redisPidForCpu ? cpuMs(redisPidForCpu) : NaN;
    const r = await drive(score, nextRequest, DURATION);
    const s1 = cpuMs(scorer.pid);
    const d1 = redisPidForCpu ? cpuMs(redisPidForCpu) : NaN;
    return {
      setup: `scorer, ${threads} thread${threads === 1 ? '' : 's'}${tracing ? '' : ', untraced'}`,
      round,
      ...r,
      cpu_ms_per_req: (s1 - s0) / r.requests,
      redis_cpu_ms_per_req: (d1 - d0) / r.requests,
    };
  } finally {
    await client.close();
    await stopProcess(scorer);
    const { Redis } = await import('ioredis');
    const c = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await c.del(stream).catch(() => undefined);
    c.disconnect();
  }
}

async function measureFloor(round) {
  let out = '';
  const { child, value } = await startProcess({
    name: `floor-r${round}`,
    cmd: 'taskset',
    args: [
      '-c',
      SCORER_CORE,
      process.execPath,
      SELF,
      '--floor-child',
      ...['--duration', String(DURATION), '--warmup', String(WARMUP)],
      ...['--conc', String(CONC), '--text-kb', values['text-kb']],
    ],
    env: { ...process.env, BENCH_SEED: String(round) },
    logFile: path.join(logDir, `floor-r${round}.log`),
    ready: (line) => {
      out = line;
      return line.startsWith('{"floor_result"') ? JSON.parse(line).floor_result : undefined;
    },
    quiet: true,
    timeoutMs: (WARMUP + DURATION + 60) * 1000,
  }).catch((err) => {
    throw new Error(`${err.message} (last line: ${out})`);
  });
  children.push(child);
  await stopProcess(child);
  return { setup: 'in-process floor', round, ...value, redis_cpu_ms_per_req: null };
}

// ---------------------------------------------------------------------------------------------
// Main

const onSignal = () => {
  for (const c of children) c.kill('SIGKILL');
  redisProc?.kill('SIGKILL');
  if (redisMode === 'engines')
    spawnSync('bash', [ENGINES, 'release', String(run), 'redis'], { stdio: 'ignore' });
  process.exit(130);
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

const results = [];
try {
  await startRedis();
  for (let round = 1; round <= ROUNDS; round++) {
    const line = [await measureFloor(round)];
    for (const s of SCORERS) line.push(await measureScorer(round, s));
    for (const r of line) {
      results.push(r);
      console.log(JSON.stringify({ bench: 'scorer-capacity', conc: CONC, ...r }));
    }
  }
} finally {
  await Promise.all(children.map((c) => stopProcess(c)));
  await stopRedis();
}

// ---------------------------------------------------------------------------------------------
// Summary

const ms = (x) => (x === null || !Number.isFinite(x) ? 'n/a' : x.toFixed(2));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
console.log(
  `\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, ` +
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; measured on core ${SCORER_CORE}, client and Redis (${redisMode}) on core ` +
    `${DRIVER_CORE}; ${CONC} in flight, ~${values['text-kb']} KB prompts, ${WARMUP} s warm-up + ` +
    `${DURATION} s per line; logs: ${logDir}\n`,
);
console.log(
  'setup                        round   req/s  p50 ms  p99 ms  CPU ms/req  core busy  req/s per busy core  redis CPU ms/req  errors  flagged',
);
for (const r of results)
  console.log(
    `${r.setup.padEnd(29)}${String(r.round).padStart(5)}${String(r.rps).padStart(8)}` +
      `${ms(r.p50_ms).padStart(8)}${ms(r.p99_ms).padStart(8)}${ms(r.cpu_ms_per_req).padStart(12)}` +
      `${Math.round((r.rps * r.cpu_ms_per_req) / 10)}%`.padStart(11) +
      String(Math.round(1000 / r.cpu_ms_per_req)).padStart(21) +
      `${ms(r.redis_cpu_ms_per_req).padStart(18)}${String(r.errors).padStart(8)}` +
      `${Math.round((100 * r.flagged) / (r.requests + r.errors))}%`.padStart(9),
  );
const setups = [...new Set(results.map((r) => r.setup))];
const med = Object.fromEntries(
  setups.map((s) => {
    const rs = results.filter((r) => r.setup === s);
    return [
      s,
      {
        rps: median(rs.map((r) => r.rps)),
        p99: median(rs.map((r) => r.p99_ms)),
        cpu: median(rs.map((r) => r.cpu_ms_per_req)),
      },
    ];
  }),
);
const floor = med['in-process floor'];
const parts = setups
  .filter((s) => s !== 'in-process floor')
  .map(
    (s) =>
      `${s} ${med[s].rps} req/s (${Math.round((100 * med[s].rps) / floor.rps)}% of the floor), ` +
      `p99 ${ms(med[s].p99)} ms, ${ms(med[s].cpu)} CPU ms/req ` +
      `(${Math.round(1000 / med[s].cpu)} req/s per busy core)`,
  );
console.log(
  `\nsummary (medians of ${ROUNDS}): one scorer core: ${parts.join('; ')}; ` +
    `in-process floor ${floor.rps} req/s, ${ms(floor.cpu)} CPU ms/req ` +
    `(${Math.round(1000 / floor.cpu)} req/s per busy core).`,
);
