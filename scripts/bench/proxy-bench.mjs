#!/usr/bin/env node
// What a protected completion costs over calling the provider directly, side by side with a bare
// pass-through proxy and the Portkey gateway, in one run, against the same fake provider.
//
//   npm run bench:proxy -- [--duration 10] [--only guard,portkey,floor] [--no-portkey]
//                          [--warmup 3] [--conc 64] [--ttfb-requests 300] [--chunk-delay 5]
//                          [--json results.json] [--no-stream] [--cpu-prof DIR]
//
// --cpu-prof DIR runs the guard under `node --cpu-prof` (profile written to DIR when it stops);
// summarise it with `node scripts/bench/cpuprofile-top.mjs DIR/*.cpuprofile --skip-s 2`.
//
// Targets, measured one after another, never at once:
// - direct:  the fake provider itself (test/support/fake-provider.ts), the reference for "added";
// - floor:   a bare node:http pass-through proxy (scripts/bench/bare-proxy.mjs);
// - portkey: the Portkey gateway (@portkey-ai/gateway, pinned in scripts/bench/peers, installed
//            there on first use), no guardrail, forwarding OpenAI chat completions to the fake
//            provider through its x-portkey-provider / x-portkey-custom-host headers (peers pins
//            @hono/node-server to 1.13.5: with newer ones Portkey 1.15 fails every stream with
//            "TypeError: immutable", Portkey-AI/gateway#1389);
// - guard:   our standalone server (services/standalone/dist/main.js), default policy, input and
//            output checked, one activity recorded per request; streams in `window` mode.
// Each gateway runs alone on core 1 (`taskset -c 1`); the fake provider and this process (the
// load generator) share core 0. So requests/s at concurrency 64 is requests/s per core.
//
// Per target: autocannon at concurrency 1 and 64 (latencies from every response, at microsecond
// resolution, not autocannon's whole-millisecond histogram), the gateway's CPU per request and how
// busy each core was; then a sequential loop of streamed chat completions (20 chunks of a ~600
// character answer, --chunk-delay ms apart) for the time to the first body byte, to the first
// character of answer text, and to the end. Exits non-zero only when the harness itself fails (a
// process that does not start, a wrong answer, a crash); a target missed is a result.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { cpuMs } from './load.mjs';
import autocannon from 'autocannon';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PEERS = path.join(ROOT, 'scripts/bench/peers');
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    only: { type: 'string', default: 'floor,portkey,guard' },
    'no-portkey': { type: 'boolean', default: false },
    conc: { type: 'string', default: '64' },
    'ttfb-requests': { type: 'string', default: '300' },
    'chunk-delay': { type: 'string', default: '5' },
    json: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'no-stream': { type: 'boolean', default: false },
  },
});
const DURATION = Number(values.duration);
const WARMUP = Number(values.warmup);
const CONC = Number(values.conc);
const TTFB_N = Number(values['ttfb-requests']);
const CHUNK_DELAY = Number(values['chunk-delay']);
for (const [k, v] of Object.entries({ DURATION, WARMUP, CONC, TTFB_N, CHUNK_DELAY }))
  if (!Number.isFinite(v) || v < 0) throw new Error(`bad --${k.toLowerCase()}`);
const KNOWN = ['floor', 'portkey', 'guard'];
const selected = values.only
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const s of selected) if (!KNOWN.includes(s)) throw new Error(`--only: unknown target ${s}`);
const want = (name) => selected.includes(name) && !(name === 'portkey' && values['no-portkey']);

// A ~330-character ordinary prompt and a ~600-character clean answer, streamed in 20 chunks.
const PROMPT =
  'Hi! I am planning a trip to Lisbon next spring with my two kids. Could you suggest a three-day itinerary ' +
  'that mixes museums, parks and good places to eat, and tell me which neighbourhoods are easiest to stay in ' +
  'without a car? We like seafood, but one of the kids is allergic to nuts, so please flag anything risky.';
const ANSWER =
  'Here is a relaxed three-day plan for Lisbon with kids. Day one: take the tram to Belém, visit the ' +
  'monastery and the tower, and have lunch by the river; ask the staff about nuts before ordering the ' +
  'famous custard tarts. Day two: spend the morning at the Oceanarium, ride the cable car along the ' +
  'waterfront and stop at the science museum. Day three: walk up to the castle, wander down through ' +
  'Alfama and finish with grilled fish near the cathedral. For a base without a car, Baixa and Chiado ' +
  'are flat, central and close to the metro, and Avenida da Liberdade is quieter at night. Enjoy the trip!';
const CHUNKS = 20;
const BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: PROMPT }],
});
const STREAM_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  stream: true,
  messages: [{ role: 'user', content: PROMPT }],
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-proxy-bench-'));
const say = (s) => process.stdout.write(`${s}\n`);

// ---------------------------------------------------------------------------------------------
// Processes and cores

const cores = os.availableParallelism();
const haveTaskset = spawnSync('taskset', ['--version']).error === undefined;
const PIN = haveTaskset && cores >= 2;
const LOAD_CORE = 0;
const GATEWAY_CORE = 1;
if (PIN) {
  // This process is the load generator: onto core 0 with the fake provider, all its threads.
  const r = spawnSync('taskset', ['-a', '-p', '-c', String(LOAD_CORE), String(process.pid)]);
  if (r.status !== 0) throw new Error(`taskset on the bench process failed: ${r.stderr}`);
}

const children = new Set();
function killAll() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });

function start(name, core, cmd, args, env = {}) {
  const pinned = PIN && core !== null;
  const child = spawn(
    pinned ? 'taskset' : cmd,
    pinned ? ['-c', String(core), cmd, ...args] : args,
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  const log = fs.createWriteStream(path.join(tmp, `${name}.log`));
  child.stderr.pipe(log, { end: false });
  child.lines = readline.createInterface({ input: child.stdout });
  child.lines.on('line', (l) => log.write(l + '\n'));
  child.logPath = path.join(tmp, `${name}.log`);
  child.once('exit', () => children.delete(child));
  return child;
}

function exited(child, name) {
  return new Promise((_, reject) =>
    child.once('exit', (code, sig) =>
      reject(new Error(`${name} exited (${code ?? sig}) while starting; log: ${child.logPath}`)),
    ),
  );
}

async function waitLine(child, name, pick, timeoutMs = 30_000) {
  const found = new Promise((resolve) => {
    child.lines.on('line', (l) => {
      const v = pick(l);
      if (v !== undefined) resolve(v);
    });
  });
  return withTimeout(Promise.race([found, exited(child, name)]), timeoutMs, `${name} start`);
}

async function waitHttp(child, name, url, ok, timeoutMs = 60_000) {
  const poll = (async () => {
    for (;;) {
      try {
        const r = await fetch(url);
        await r.arrayBuffer();
        if (ok(r.status)) return;
      } catch {
        /* not listening yet */
      }
      await sleep(100);
    }
  })();
  return withTimeout(Promise.race([poll, exited(child, name)]), timeoutMs, `${name} start`);
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(t);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function withTimeout(p, ms, what) {
  let t;
  return Promise.race([
    p,
    new Promise((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

async function freePort() {
  const s = net.createServer();
  const port = await new Promise((r) => s.listen(0, '127.0.0.1', () => r(s.address().port)));
  await new Promise((r) => s.close(r));
  return port;
}

// Per-core busy and total jiffies from /proc/stat.
function coreTimes() {
  const out = {};
  try {
    for (const line of fs.readFileSync('/proc/stat', 'utf8').split('\n')) {
      const m = /^cpu(\d+)\s+(.*)$/.exec(line);
      if (!m) continue;
      const v = m[2].split(/\s+/).map(Number);
      const idle = v[3] + (v[4] ?? 0);
      const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
      out[m[1]] = { busy: total - idle, total };
    }
  } catch {
    /* not Linux */
  }
  return out;
}
function coreBusy(a, b, core) {
  const x = a[core];
  const y = b[core];
  if (!x || !y || y.total === x.total) return NaN;
  return (y.busy - x.busy) / (y.total - x.total);
}

// ---------------------------------------------------------------------------------------------
// Load and measurement

function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** autocannon, keeping every 2xx latency (float ms) from its `response` events. */
async function load(target, connections, seconds, { stream = false } = {}) {
  const lat = [];
  const r = await new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: target.headers,
        body: stream ? STREAM_BODY : BODY,
        connections,
        duration: seconds,
        timeout: 30,
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    inst.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) lat.push(ms);
    });
  });
  const sorted = Float64Array.from(lat).sort();
  return {
    requests: r['2xx'],
    rps: r['2xx'] / r.duration,
    p50_ms: pct(sorted, 50),
    p90_ms: pct(sorted, 90),
    p99_ms: pct(sorted, 99),
    errors: r.non2xx + r.errors + r.timeouts,
  };
}

/** One streamed request on a kept-alive socket: ms to the first body byte, first text, end. */
function streamOnce(agent, target) {
  const u = new URL(target.url);
  return new Promise((resolve, reject) => {
    let first = null;
    let firstText = null;
    let buf = '';
    const t0 = performance.now();
    const req = http.request(
      {
        agent,
        hostname: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'POST',
        headers: { ...target.headers, 'content-length': Buffer.byteLength(STREAM_BODY) },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (d) => {
          const now = performance.now() - t0;
          if (first === null) first = now;
          // The first chunk carrying a non-empty `content`: the first character of the answer.
          if (firstText === null && /"content":"[^"]/.test(buf.slice(-16) + d)) firstText = now;
          buf += d;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            first,
            firstText,
            total: performance.now() - t0,
            body: buf,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(STREAM_BODY);
  });
}

function streamText(body) {
  let text = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const d = JSON.parse(line.slice(6));
    text += d.choices?.[0]?.delta?.content ?? '';
  }
  return text;
}

async function measureStream(target) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const check = await streamOnce(agent, target);
  const text = check.status === 200 ? streamText(check.body) : '';
  if (text !== ANSWER)
    throw new Error(
      `${target.name}: streamed answer is not the fake provider's text (status ${check.status}): ${check.body.slice(0, 400)}`,
    );
  for (let i = 0; i < Math.min(50, TTFB_N); i++) await streamOnce(agent, target);
  const first = [];
  const firstText = [];
  const total = [];
  let errors = 0;
  for (let i = 0; i < TTFB_N; i++) {
    const r = await streamOnce(agent, target);
    if (r.status !== 200 || r.firstText === null) {
      errors++;
      continue;
    }
    first.push(r.first);
    firstText.push(r.firstText);
    total.push(r.total);
  }
  agent.destroy();
  const s = (a) => Float64Array.from(a).sort();
  const [f, ft, t] = [s(first), s(firstText), s(total)];
  return {
    n: f.length,
    errors,
    ttfb_p50_ms: pct(f, 50),
    ttfb_p99_ms: pct(f, 99),
    first_text_p50_ms: pct(ft, 50),
    first_text_p99_ms: pct(ft, 99),
    end_p50_ms: pct(t, 50),
    end_p99_ms: pct(t, 99),
  };
}

async function sanity(target) {
  const r = await fetch(target.url, {
    method: 'POST',
    headers: target.headers,
    body: target.sanityBody ?? BODY,
  });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* reported below */
  }
  if (r.status !== 200 || json?.choices?.[0]?.message?.content !== ANSWER)
    throw new Error(`${target.name}: sanity request failed: ${r.status} ${text.slice(0, 400)}`);
  return json;
}

async function measure(target, pid) {
  say(`\n== ${target.name}: ${target.describe}`);
  const sane = await sanity(target);
  if (target.onSanity) target.onSanity(sane);
  if (WARMUP > 0) {
    await load(target, CONC, WARMUP);
    await load(target, 1, Math.min(WARMUP, 2));
  }
  const cpuStart = pid ? cpuMs(pid) : NaN;
  const c1 = await load(target, 1, DURATION);
  c1.gateway_cpu_ms_per_req = pid ? (cpuMs(pid) - cpuStart) / c1.requests : NaN;
  say(
    `  c=1:  ${c1.rps.toFixed(0)} req/s, p50 ${ms(c1.p50_ms)}, p99 ${ms(c1.p99_ms)}, errors ${c1.errors}, gateway CPU ${ms(c1.gateway_cpu_ms_per_req)}/req`,
  );
  const cpu0 = pid ? cpuMs(pid) : NaN;
  const cores0 = coreTimes();
  const cHigh = await load(target, CONC, DURATION);
  const cores1 = coreTimes();
  const cpu = pid ? cpuMs(pid) - cpu0 : NaN;
  cHigh.gateway_cpu_ms_per_req = cpu / cHigh.requests;
  cHigh.load_core_busy = coreBusy(cores0, cores1, String(LOAD_CORE));
  cHigh.gateway_core_busy = coreBusy(cores0, cores1, String(GATEWAY_CORE));
  say(
    `  c=${CONC}: ${cHigh.rps.toFixed(0)} req/s, p50 ${ms(cHigh.p50_ms)}, p99 ${ms(cHigh.p99_ms)}, errors ${cHigh.errors}` +
      `, gateway CPU ${ms(cHigh.gateway_cpu_ms_per_req)}/req, core ${LOAD_CORE} busy ${pc(cHigh.load_core_busy)}, core ${GATEWAY_CORE} busy ${pc(cHigh.gateway_core_busy)}`,
  );
  let stream = null;
  if (!values['no-stream']) {
    stream = await measureStream(target);
    say(
      `  stream (c=1, ${stream.n} requests): first byte p50 ${ms(stream.ttfb_p50_ms)} p99 ${ms(stream.ttfb_p99_ms)}` +
        `, first text p50 ${ms(stream.first_text_p50_ms)}, end p50 ${ms(stream.end_p50_ms)}, errors ${stream.errors}`,
    );
  }
  return { name: target.name, describe: target.describe, c1, cHigh, stream };
}

const ms = (v) => (Number.isFinite(v) ? `${v < 10 ? v.toFixed(2) : v.toFixed(1)} ms` : 'n/a');
const pc = (v) => (Number.isFinite(v) ? `${Math.round(v * 100)}%` : 'n/a');

// ---------------------------------------------------------------------------------------------
// Targets

async function startFake() {
  const child = start(
    'fake-provider',
    LOAD_CORE,
    process.execPath,
    ['--import', 'tsx', 'test/support/fake-provider.ts', '--port', '0'],
    {
      FAKE_PROVIDER_TEXT: ANSWER,
      FAKE_PROVIDER_CHUNKS: String(CHUNKS),
      FAKE_PROVIDER_CHUNK_DELAY_MS: String(CHUNK_DELAY),
      FAKE_PROVIDER_DELAY_MS: '0',
    },
  );
  const port = await waitLine(child, 'fake provider', (l) => {
    try {
      const j = JSON.parse(l);
      return j.fake_provider === 'listening' ? j.port : undefined;
    } catch {
      return undefined;
    }
  });
  return { child, port };
}

async function startFloor(fakePort) {
  const child = start(
    'floor',
    GATEWAY_CORE,
    process.execPath,
    [path.join(ROOT, 'scripts/bench/bare-proxy.mjs')],
    { PORT: '0', UPSTREAM: `http://127.0.0.1:${fakePort}` },
  );
  const port = await waitLine(child, 'bare proxy', (l) => {
    try {
      return JSON.parse(l).listening;
    } catch {
      return undefined;
    }
  });
  return { child, port };
}

function portkeyEntry() {
  const pkgDir = path.join(PEERS, 'node_modules/@portkey-ai/gateway');
  if (!fs.existsSync(path.join(pkgDir, 'package.json'))) {
    say(
      `Portkey gateway not installed: installing it into scripts/bench/peers (first use; npm ci --prefix scripts/bench/peers) ...`,
    );
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = spawnSync(npm, ['ci', '--prefix', PEERS, '--no-audit', '--no-fund'], {
      stdio: 'inherit',
    });
    if (r.status !== 0) throw new Error('installing the Portkey gateway failed');
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : Object.values(pkg.bin ?? {})[0];
  const entry = path.join(pkgDir, bin ?? 'build/start-server.js');
  if (!fs.existsSync(entry)) throw new Error(`Portkey gateway entry point not found: ${entry}`);
  return { entry, version: pkg.version };
}

async function startPortkey() {
  const { entry, version } = peer;
  const port = await freePort();
  // --headless: no console UI; the server is the same.
  const child = start('portkey', GATEWAY_CORE, process.execPath, [
    entry,
    `--port=${port}`,
    '--headless',
  ]);
  await waitHttp(child, 'portkey', `http://127.0.0.1:${port}/`, () => true);
  return { child, port, version };
}

async function startGuard(fakePort, key) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(tmp, 'guard-data-'));
  const args = [];
  if (values['cpu-prof']) {
    fs.mkdirSync(values['cpu-prof'], { recursive: true });
    args.push('--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`);
  }
  args.push(path.join(ROOT, 'services/standalone/dist/main.js'));
  const child = start('guard', GATEWAY_CORE, process.execPath, args, {
    MODE: 'embedded',
    HOST: '127.0.0.1',
    PORT: String(port),
    GUARD_WORKERS: '1',
    GUARD_SCORE_THREADS: '0',
    // Every request sends the same prompt and answer: the encoder's cache would answer all but the
    // first reads, which real traffic of distinct prompts does not get.
    GUARD_ENCODER_CACHE: '0',
    GUARD_ACCESS_LOG: 'false',
    GUARD_LOG_LEVEL: 'warn',
    GUARD_DATA_DIR: dataDir,
    GUARD_BOOTSTRAP_ADMIN_KEY: key,
    GUARD_OPENAI_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
    GUARD_OPENAI_API_KEY: 'sk-bench-fake',
    GUARD_STREAM_MODE: 'window',
    GUARD_STREAM_WINDOW_CHARS: '400',
    GUARD_STREAM_OVERLAP_CHARS: '100',
  });
  await waitHttp(child, 'guard', `http://127.0.0.1:${port}/readyz`, (s) => s === 200);
  return { child, port };
}

// ---------------------------------------------------------------------------------------------
// Run

// Installed (when missing) before anything is measured, so that npm does not run beside a target.
const peer = want('portkey') ? portkeyEntry() : null;
const loadStart = os.loadavg()[0].toFixed(1);
const results = [];
let portkeyVersion = null;
let guardSample = null;
let failed = null;
const fake = await startFake();
try {
  const direct = {
    name: 'direct',
    describe: 'the fake provider itself, no proxy (the reference)',
    url: `http://127.0.0.1:${fake.port}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
  };
  results.push(await measure(direct, null));

  if (want('floor')) {
    const f = await startFloor(fake.port);
    try {
      results.push(
        await measure(
          {
            name: 'floor',
            describe: 'bare node:http pass-through proxy (scripts/bench/bare-proxy.mjs)',
            url: `http://127.0.0.1:${f.port}/v1/chat/completions`,
            headers: direct.headers,
          },
          f.child.pid,
        ),
      );
    } finally {
      await stop(f.child);
    }
  }

  if (want('portkey')) {
    const p = await startPortkey();
    portkeyVersion = p.version;
    try {
      results.push(
        await measure(
          {
            name: 'portkey',
            describe: `Portkey gateway ${p.version}, no guardrail, provider openai + custom host`,
            url: `http://127.0.0.1:${p.port}/v1/chat/completions`,
            headers: {
              ...direct.headers,
              'x-portkey-provider': 'openai',
              'x-portkey-custom-host': `http://127.0.0.1:${fake.port}/v1`,
            },
          },
          p.child.pid,
        ),
      );
    } finally {
      await stop(p.child);
    }
  }

  if (want('guard')) {
    const key =
      'gk_bench_' + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
    const g = await startGuard(fake.port, key);
    try {
      results.push(
        await measure(
          {
            name: 'guard',
            describe:
              'our server: default policy, input + output checked, activity recorded; streams in window mode (400/100)',
            url: `http://127.0.0.1:${g.port}/guard/chat/completions`,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
            sanityBody: JSON.stringify({ ...JSON.parse(BODY), monitor_details: true }),
            onSanity: (j) => {
              if (!j.guard?.pre || !j.guard?.post)
                throw new Error(
                  `guard: the answer does not report both checks: ${JSON.stringify(j.guard)}`,
                );
              guardSample = j.guard;
            },
          },
          g.child.pid,
        ),
      );
    } finally {
      await stop(g.child);
    }
  }
} catch (err) {
  failed = err;
} finally {
  await stop(fake.child);
}
if (failed) {
  say(`\nHARNESS FAILURE: ${failed.stack ?? failed}\n(logs in ${tmp})`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// Report

const by = Object.fromEntries(results.map((r) => [r.name, r]));
const base = by.direct;
const added = (v, b) => (Number.isFinite(v) && Number.isFinite(b) ? v - b : NaN);
const n0 = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
const f2 = (v) => (Number.isFinite(v) ? (Math.abs(v) < 10 ? v.toFixed(2) : v.toFixed(1)) : 'n/a');

function table(head, rows) {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(w[i])).join(' | ')} |`;
  say(line(head));
  say(`| ${w.map((x) => '-'.repeat(x)).join(' | ')} |`);
  for (const r of rows) say(line(r));
}

say(
  `\nmachine: ${cores} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average ${loadStart} before, ${os.loadavg()[0].toFixed(1)} after; ` +
    (PIN
      ? `each gateway on core ${GATEWAY_CORE}, fake provider + load generator on core ${LOAD_CORE}`
      : 'NOT pinned (needs taskset and 2 cores): requests/s are not per core') +
    `; ${DURATION} s per measurement after ${WARMUP} s warm-up; answer ${ANSWER.length} chars, ${CHUNKS} chunks ${CHUNK_DELAY} ms apart when streamed`,
);
// Nothing of this bench runs on the gateway core while the fake provider is measured alone, so
// whatever kept that core busy then was other work on the machine.
const otherWork = base.cHigh.gateway_core_busy;
if (PIN && otherWork > 0.1)
  say(
    `warning: core ${GATEWAY_CORE} was ${pc(otherWork)} busy with other work while only the fake provider was measured: the machine is shared, read these numbers with care`,
  );
if (guardSample)
  say(
    `guard sample: policy ${guardSample.policy_id ?? '(default)'}, pre violation ${guardSample.pre?.violation}, post violation ${guardSample.post?.violation}, blocked ${guardSample.blocked}`,
  );

say(`\nNon-streaming chat completions (ms; "added" = minus the direct call's value):\n`);
table(
  [
    'target',
    `req/s @${CONC} (1 core)`,
    'p50 @1',
    'p99 @1',
    `p50 @${CONC}`,
    `p99 @${CONC}`,
    'added p50 @1',
    `added p99 @${CONC}`,
    'gateway CPU/req @1',
    `@${CONC}`,
    `core busy @${CONC} (load/gw)`,
    'errors',
  ],
  results.map((r) => [
    r.name,
    n0(r.cHigh.rps),
    f2(r.c1.p50_ms),
    f2(r.c1.p99_ms),
    f2(r.cHigh.p50_ms),
    f2(r.cHigh.p99_ms),
    r === base ? '-' : f2(added(r.c1.p50_ms, base.c1.p50_ms)),
    r === base ? '-' : f2(added(r.cHigh.p99_ms, base.cHigh.p99_ms)),
    r === base ? '-' : f2(r.c1.gateway_cpu_ms_per_req),
    r === base ? '-' : f2(r.cHigh.gateway_cpu_ms_per_req),
    `${pc(r.cHigh.load_core_busy)} / ${pc(r.cHigh.gateway_core_busy)}`,
    r.c1.errors + r.cHigh.errors,
  ]),
);

const streamed = results.filter((r) => r.stream);
if (streamed.length) {
  say(`\nStreaming chat completions, concurrency 1, ${TTFB_N} requests each (ms):\n`);
  table(
    [
      'target',
      'first byte p50',
      'p99',
      'added p50',
      'added p99',
      'first text p50',
      'added',
      'end of stream p50',
      'added',
      'errors',
    ],
    streamed.map((r) => [
      r.name,
      f2(r.stream.ttfb_p50_ms),
      f2(r.stream.ttfb_p99_ms),
      r === base ? '-' : f2(added(r.stream.ttfb_p50_ms, base.stream.ttfb_p50_ms)),
      r === base ? '-' : f2(added(r.stream.ttfb_p99_ms, base.stream.ttfb_p99_ms)),
      f2(r.stream.first_text_p50_ms),
      r === base ? '-' : f2(added(r.stream.first_text_p50_ms, base.stream.first_text_p50_ms)),
      f2(r.stream.end_p50_ms),
      r === base ? '-' : f2(added(r.stream.end_p50_ms, base.stream.end_p50_ms)),
      r.stream.errors,
    ]),
  );
}

const guard = by.guard;
const portkey = by.portkey;
const targets = [];
if (guard) {
  const ratio = portkey ? guard.cHigh.rps / portkey.cHigh.rps : NaN;
  targets.push([
    "guard requests/s per core >= 2x Portkey's",
    portkey
      ? `${n0(guard.cHigh.rps)} vs ${n0(portkey.cHigh.rps)} = ${ratio.toFixed(2)}x`
      : 'Portkey not measured',
    portkey ? (ratio >= 2 ? 'met' : 'MISSED') : 'n/a',
  ]);
  const a1 = added(guard.c1.p50_ms, base.c1.p50_ms);
  targets.push(['guard added p50 at c=1 <= 1 ms', `${f2(a1)} ms`, a1 <= 1 ? 'met' : 'MISSED']);
  if (guard.stream) {
    const at = added(guard.stream.ttfb_p50_ms, base.stream.ttfb_p50_ms);
    const text = added(guard.stream.first_text_p50_ms, base.stream.first_text_p50_ms);
    targets.push([
      'guard added time to first byte (window mode) <= 5 ms',
      `${f2(at)} ms (p50; first answer text: +${f2(text)} ms)`,
      at <= 5 ? 'met' : 'MISSED',
    ]);
  }
  const a99 = added(guard.cHigh.p99_ms, base.cHigh.p99_ms);
  targets.push([
    `guard added p99 at c=${CONC} <= 10 ms`,
    `${f2(a99)} ms`,
    a99 <= 10 ? 'met' : 'MISSED',
  ]);
  say(`\nTargets:\n`);
  table(['target', 'measured', 'result'], targets);
}
const saturated = results.filter(
  (r) => r !== base && r.cHigh.load_core_busy > 0.95 && r.cHigh.gateway_core_busy < 0.9,
);
if (saturated.length)
  say(
    `\nnote: core ${LOAD_CORE} (fake provider + load generator) was the bottleneck for ${saturated
      .map((r) => r.name)
      .join(', ')}: their requests/s are a lower bound.`,
  );

if (values.json) {
  fs.writeFileSync(
    values.json,
    JSON.stringify(
      {
        machine: { cores, cpu: os.cpus()[0]?.model, node: process.version },
        load_average: { before: Number(loadStart), after: os.loadavg()[0] },
        pinned: PIN,
        duration_s: DURATION,
        concurrency: CONC,
        chunk_delay_ms: CHUNK_DELAY,
        portkey_version: portkeyVersion,
        results,
        targets,
      },
      null,
      2,
    ),
  );
}
fs.rmSync(tmp, { recursive: true, force: true });
