#!/usr/bin/env node
// Throughput and latency of POST /guard/monitor on the standalone server, the way a user runs it:
// the compiled server in its own process, a real HTTP load generator in another (wrk when on PATH,
// else autocannon). Bounded in time; prints one JSON line per run and a summary.
//
//   npm run bench:monitor -- [--conc 1,32] [--duration 10] [--body prompt|1kb|requests|conversation|agent|chat] [--pin]
//                            [--no-ceiling] [--policy default|keywords] [--cpu-prof DIR]
//
// --body agent|chat: conversations (conversations.mjs) with the encoder's cache as the server is
// set (GUARD_ENCODER_CACHE); the other bodies run with it off unless GUARD_ENCODER_CACHE is set.
//
// --cpu-prof DIR runs the server under `node --cpu-prof`: one profile per thread (the encoder's
// worker threads too) written to DIR when it stops; read them with cpuprofile-top.mjs.
//
// --policy keywords first creates a policy with 200 keywords and 3 regexes (block) and names it in
// every request; default sends no policy (the preset Basic Content Safety).
//
// Unless --no-ceiling, the same load then runs against a bare express app that only parses the
// same body and answers (scripts/bench/bare-express.mjs, same process count), so each line
// carries the ratio to that ceiling measured minutes apart on the same machine.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { BODIES, canPin, cpuMs, loadRunner, pickTool, startProcess } from './load.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = parseArgs({
  options: {
    conc: { type: 'string', default: '1,32' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    body: { type: 'string', default: 'prompt' },
    tool: { type: 'string', default: 'auto' },
    pin: { type: 'boolean', default: false },
    'access-log': { type: 'boolean', default: true },
    'no-ceiling': { type: 'boolean', default: false },
    policy: { type: 'string', default: 'default' },
    'cpu-prof': { type: 'string' },
  },
});

const CONVERSATIONS = ['agent', 'chat'];
let body = BODIES[values.body];
if (!body) throw new Error(`--body must be one of ${Object.keys(BODIES).join(', ')}`);
if (!['default', 'keywords'].includes(values.policy))
  throw new Error('--policy must be default or keywords');

const tool = pickTool(values.tool);
const pin = values.pin && canPin();

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-bench-'));
const key = 'gk_bench_' + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
const serverCmd = [process.execPath, path.join(ROOT, 'services/standalone/dist/main.js')];
if (values['cpu-prof']) {
  fs.mkdirSync(values['cpu-prof'], { recursive: true });
  serverCmd.splice(1, 0, '--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`);
}
const { child: server, value: port } = await startProcess({
  name: 'server',
  cmd: pin ? 'taskset' : serverCmd[0],
  args: pin ? ['-c', '0', ...serverCmd] : serverCmd.slice(1),
  env: {
    ...process.env,
    MODE: 'embedded',
    PORT: '0',
    HOST: '127.0.0.1',
    GUARD_DATA_DIR: dataDir,
    GUARD_BOOTSTRAP_ADMIN_KEY: key,
    GUARD_ACCESS_LOG: values['access-log'] ? 'true' : 'false',
    GUARD_LOG_LEVEL: process.env.GUARD_LOG_LEVEL ?? 'info',
    // The single-request bodies repeat part of their text on every request (the opening windows
    // of 1kb, the request of conversation): the encoder's cache would answer it, which traffic of
    // distinct requests does not get, so it is off for them unless set. agent and chat resend
    // what real conversations resend: the server's own setting.
    ...(CONVERSATIONS.includes(values.body)
      ? {}
      : { GUARD_ENCODER_CACHE: process.env.GUARD_ENCODER_CACHE ?? '0' }),
  },
  logFile: path.join(dataDir, 'server.log'),
  ready: (line) => (line.includes('"guard listening"') ? JSON.parse(line).port : undefined),
});
const url = `http://127.0.0.1:${port}/guard/monitor`;
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

if (values.policy === 'keywords') {
  const created = await fetch(`http://127.0.0.1:${port}/policies`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'bench: 200 keywords and 3 regexes',
      scanners_config: {
        keywords: Array.from({ length: 200 }, (_, i) => `codename ${i} falcon${i}`),
        regex: [
          '\\b\\d{3}-\\d{2}-\\d{4}\\b',
          'ACME-[0-9]{6}',
          '(?:password|passwd)\\s*[:=]\\s*\\S+',
        ],
      },
    }),
  });
  if (created.status !== 201) throw new Error(`policy create failed: ${created.status}`);
  const policy_id = (await created.json()).id;
  body = Array.isArray(body) ? body.map((b) => ({ ...b, policy_id })) : { ...body, policy_id };
}

const sanity = await fetch(url, {
  method: 'POST',
  headers,
  body: JSON.stringify(Array.isArray(body) ? body[0] : body),
});
const sanityBody = await sanity.json();
if (sanity.status !== 200 || sanityBody.error) {
  server.kill('SIGTERM');
  throw new Error(
    `sanity request failed: ${sanity.status} ${JSON.stringify(sanityBody).slice(0, 300)}`,
  );
}

const loadWith = loadRunner({ tool, body, key, dir: dataDir, pin });
const run = (conc, seconds, target = url) => loadWith(conc, seconds, target);

const results = [];
try {
  for (const conc of values.conc.split(',').map(Number)) {
    if (Number(values.warmup) > 0) await run(conc, Number(values.warmup));
    const cpu0 = cpuMs(server.pid);
    const r = await run(conc, Number(values.duration));
    const cpu = cpuMs(server.pid) - cpu0;
    const line = {
      bench: 'monitor',
      tool,
      body: values.body,
      policy: values.policy,
      conc,
      duration_s: Number(values.duration),
      pinned: pin,
      access_log: values['access-log'],
      workers: process.env.GUARD_WORKERS ?? 'auto',
      ...(values['cpu-prof'] ? { cpu_prof: true } : {}),
      ...r,
      server_cpu_ms_per_req: Math.round((cpu / r.requests) * 1000) / 1000,
    };
    results.push(line);
    console.log(JSON.stringify(line));
  }
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}

if (!values['no-ceiling']) {
  const bare = spawn(process.execPath, [path.join(ROOT, 'scripts/bench/bare-express.mjs')], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const barePort = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('bare express did not start in 30 s')), 30_000);
    readline.createInterface({ input: bare.stdout }).on('line', (line) => {
      if (line.includes('"listening"')) {
        clearTimeout(t);
        resolve(JSON.parse(line).listening);
      }
    });
  });
  try {
    for (const r of results) {
      const target = `http://127.0.0.1:${barePort}/guard/monitor`;
      if (Number(values.warmup) > 0) await run(r.conc, Number(values.warmup), target);
      const c = await run(r.conc, Number(values.duration), target);
      r.ceiling_rps = c.rps;
      r.ceiling_p99_ms = c.p99_ms;
      r.ratio_to_ceiling = Math.round((r.rps / c.rps) * 100) / 100;
      console.log(JSON.stringify({ bench: 'bare-express ceiling', conc: r.conc, ...c }));
    }
  } finally {
    bare.kill('SIGTERM');
  }
}
console.log(
  `\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}; sample scores: violation=${sanityBody.violation}, tokens=${sanityBody.input_tokens}`,
);
for (const r of results)
  console.log(
    `conc ${String(r.conc).padStart(3)}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, errors ${r.errors}, server CPU ${r.server_cpu_ms_per_req} ms/req` +
      (r.ratio_to_ceiling !== undefined
        ? `; bare express ${r.ceiling_rps.toFixed(0)} req/s, ratio ${r.ratio_to_ceiling}`
        : ''),
  );
