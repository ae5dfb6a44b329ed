#!/usr/bin/env node
// Where a V8 CPU profile (`node --cpu-prof`; `npm run bench:proxy -- --only guard --cpu-prof DIR`
// and `npm run bench:monitor -- --cpu-prof DIR` write them for the server, one per thread) spends
// its time (a worker thread waiting for work in piscina's atomicsWaitLoop counts as busy): the
// functions with the most self time, then the same time summed by area (our packages by folder,
// each dependency, Node's internals by module). For the areas, time in V8 builtins and native
// code (JSON, regexps, SQLite's C code) goes to the nearest JavaScript caller, so `JSON.stringify`
// of an activity counts as activity recording, not as "native".
//
//   node scripts/bench/cpuprofile-top.mjs PROFILE.cpuprofile [--top 25] [--skip-s 0] [--callers NAME]
//
// --skip-s drops the first seconds of samples (the server's start: module loading, compilation).
// --callers NAME also prints the call stacks (5 frames up) that lead to the function NAME, by time.
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '25' },
    'skip-s': { type: 'string', default: '0' },
    callers: { type: 'string' },
  },
});
if (positionals.length !== 1) {
  console.error(
    'usage: node scripts/bench/cpuprofile-top.mjs PROFILE.cpuprofile [--top N] [--skip-s S]',
  );
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(positionals[0], 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node: each sample's time delta goes to the node on top of the stack.
const skipUs = Number(values['skip-s']) * 1e6;
const self = new Map();
let t = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  t += dt;
  if (t < skipUs) continue;
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + dt);
}

const SPECIAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)']);
function area(url) {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 14).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').split('/')[0];
  const m = /\/(shared|services)\/([^/]+)\/(?:dist|src)\/(.*)$/.exec(url);
  if (m) return `${m[1]}/${m[2]}: ${m[3].split('/').slice(0, -1).join('/') || '.'}`;
  return url;
}
/** The area of a node, or of its nearest caller with a script, for builtins and native code. */
function areaOf(id) {
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const { functionName, url } = byId.get(cur).callFrame;
    if (SPECIAL.has(functionName)) return functionName;
    if (url) return area(url);
  }
  return '(native, no caller)';
}

const fns = new Map();
const areas = new Map();
let total = 0;
let idle = 0;
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const name = functionName || '(anonymous)';
  if (name === '(idle)') {
    idle += us;
    continue;
  }
  total += us;
  const short = url ? url.replace(/^file:\/\/.*?\/(node_modules|shared|services)\//, '$1/') : '';
  const key = `${name}  ${short}${url ? `:${lineNumber + 1}` : ''}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  const a = areaOf(id);
  areas.set(a, (areas.get(a) ?? 0) + us);
}

const pct = (us) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
const msOf = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
const top = Number(values.top);
console.log(
  `profile: ${(total / 1e6).toFixed(2)} s busy, ${(idle / 1e6).toFixed(2)} s idle` +
    (skipUs ? ` (first ${values['skip-s']} s skipped)` : '') +
    '; shares are of busy time\n',
);
console.log('Top functions by self time:');
for (const [k, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)} ${msOf(us)}  ${k}`);
console.log('\nSelf time by area (builtins and native code counted with their caller):');
for (const [k, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)} ${msOf(us)}  ${k}`);

if (values.callers) {
  const stacks = new Map();
  for (const [id, us] of self) {
    if (byId.get(id).callFrame.functionName !== values.callers) continue;
    const frames = [];
    for (let cur = parent.get(id); cur !== undefined && frames.length < 5; cur = parent.get(cur)) {
      const { functionName, url, lineNumber } = byId.get(cur).callFrame;
      const file = url ? url.slice(url.lastIndexOf('/') + 1) : '';
      frames.push(`${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`);
    }
    const k = frames.join(' < ');
    stacks.set(k, (stacks.get(k) ?? 0) + us);
  }
  console.log(`\nCallers of ${values.callers}:`);
  for (const [k, us] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${pct(us)} ${msOf(us)}  ${k}`);
}
