// Replays infra/docker/Dockerfile without Docker (see stage-image.sh): the build context (the
// working tree's files git does not ignore, less .dockerignore) is copied to a scratch directory,
// the build stage's RUN steps run there, and every `COPY --from=build` of the final stage copies
// into <out-dir>, which then holds the image's WORKDIR: what the roles run from. Steps that need
// root or the image's OS (apt-get, mkdir/chown of /data) are reported and skipped.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const log = (line) => process.stderr.write(`[stage-image] ${line}\n`);

function usage(message) {
  if (message) log(message);
  process.stderr.write(
    'usage: scripts/docker/stage-image.sh [--dockerfile FILE] [--if-changed] [--keep-build] [--print-hash] <out-dir>\n',
  );
  process.exit(2);
}

const args = process.argv.slice(2);
let dockerfile = path.join(REPO, 'infra/docker/Dockerfile');
let ifChanged = false;
let keepBuild = false;
let printHash = false;
let outArg;
while (args.length) {
  const a = args.shift();
  if (a === '--dockerfile') dockerfile = path.resolve(args.shift() ?? usage('--dockerfile FILE'));
  else if (a === '--if-changed') ifChanged = true;
  else if (a === '--keep-build') keepBuild = true;
  else if (a === '--print-hash') printHash = true;
  else if (a === '-h' || a === '--help') usage();
  else if (a.startsWith('-') || outArg) usage(`unexpected argument ${a}`);
  else outArg = a;
}
if (!outArg) usage('no out-dir');
const out = path.resolve(outArg);
if (out === REPO || out.startsWith(REPO + path.sep)) {
  // Module resolution would climb from the tree into the repository's node_modules.
  usage(`out-dir must be outside the repository (${REPO})`);
}

// ---- the Dockerfile: instructions (continuations joined, comments dropped) by stage
function parseDockerfile(text) {
  const instructions = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line) || (!current && !line.trim())) continue;
    if (/\\\s*$/.test(line)) {
      current += line.replace(/\\\s*$/, ' ');
      continue;
    }
    current += line;
    const m = /^\s*(\w+)\s+([\s\S]*)$/.exec(current);
    if (m) instructions.push({ op: m[1].toUpperCase(), rest: m[2].trim() });
    current = '';
  }
  const stages = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /\bAS\s+(\S+)\s*$/i.exec(ins.rest);
      stages.push({ name: m ? m[1] : String(stages.length), from: ins.rest, steps: [] });
    } else if (stages.length) stages.at(-1).steps.push(ins);
  }
  return stages;
}

/** Flags (`--from=build`, `--chown=1000`) and the words after them; JSON (exec) form too. */
function splitCopy(rest) {
  const flags = {};
  const words = [];
  let s = rest;
  for (;;) {
    const m = /^--([\w-]+)(?:=(\S+))?\s+/.exec(s);
    if (!m) break;
    flags[m[1]] = m[2] ?? true;
    s = s.slice(m[0].length);
  }
  if (s.startsWith('[')) words.push(...JSON.parse(s));
  else words.push(...s.split(/\s+/).filter(Boolean));
  return { flags, words };
}

// ---- the build context: files git does not ignore, less .dockerignore
function dockerignore(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const exclude = !l.startsWith('!');
      const pattern = path.posix.normalize((exclude ? l : l.slice(1)).trim().replace(/^\/+/, ''));
      let re = '';
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === '*' && pattern[i + 1] === '*') {
          i++;
          if (pattern[i + 1] === '/') {
            i++;
            re += '(?:.*/)?';
          } else re += '.*';
        } else if (c === '*') re += '[^/]*';
        else if (c === '?') re += '[^/]';
        else if (c === '[') {
          const end = pattern.indexOf(']', i);
          re += end > i ? pattern.slice(i, end + 1).replace(/^\[!/, '[^') : '\\[';
          if (end > i) i = end;
        } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
      }
      return { exclude, re: new RegExp(`^${re}$`) };
    });
}

/** As Docker: the last pattern that matches the path, or one of its parent directories, decides. */
function ignored(rules, file) {
  const parts = file.split('/');
  let result = false;
  for (const rule of rules) {
    for (let n = 1; n <= parts.length; n++) {
      if (rule.re.test(parts.slice(0, n).join('/'))) {
        result = rule.exclude;
        break;
      }
    }
  }
  return result;
}

function contextFiles() {
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: REPO, maxBuffer: 256 * 1024 * 1024 },
  )
    .toString()
    .split('\0')
    .filter(Boolean);
  const rules = dockerignore(path.join(REPO, '.dockerignore'));
  return [...new Set(listed)]
    .filter((f) => !ignored(rules, f))
    .filter((f) => {
      const st = fs.lstatSync(path.join(REPO, f), { throwIfNoEntry: false });
      return st && (st.isFile() || st.isSymbolicLink());
    })
    .sort();
}

const stages = parseDockerfile(fs.readFileSync(dockerfile, 'utf8'));
const final = stages.at(-1);
const build = stages.find((s) => s.name === 'build');
if (!build || !final || final === build)
  usage(`${dockerfile}: expected a "build" stage and a final stage`);
const files = contextFiles();

// ---- --if-changed: the same inputs as the last staging of out-dir give the same tree
const stamp = `${out}.stamp`;
const hash = createHash('sha256');
// The inputs: this replay, the Dockerfile, the Node it runs on, and the build context.
hash.update(`${process.version}\0${process.arch}\0${fs.readFileSync(dockerfile)}\0`);
hash.update(fs.readFileSync(fileURLToPath(import.meta.url)));
for (const f of files) {
  const abs = path.join(REPO, f);
  const st = fs.lstatSync(abs);
  hash.update(`${f}\0${st.mode}\0`);
  hash.update(st.isSymbolicLink() ? fs.readlinkSync(abs) : fs.readFileSync(abs));
}
const digest = hash.digest('hex');
if (printHash) {
  process.stdout.write(`${digest}\n`);
  process.exit(0);
}
if (ifChanged && fs.existsSync(out) && fs.existsSync(stamp)) {
  if (fs.readFileSync(stamp, 'utf8').trim() === digest) {
    log(`${out} is up to date (${digest.slice(0, 12)})`);
    process.exit(0);
  }
}

const writable = (dir) => {
  if (fs.existsSync(dir)) spawnSync('chmod', ['-R', 'u+w', dir], { stdio: 'inherit' });
};
const remove = (dir) => {
  writable(dir);
  fs.rmSync(dir, { recursive: true, force: true });
};

// ---- build stage
const scratch = `${out}.build`;
remove(scratch);
remove(out);
fs.rmSync(stamp, { force: true });
let buildWorkdir = '/';
let contextCopied = false;
const buildRoot = path.join(scratch, 'root');
const inBuild = (p) => path.join(buildRoot, path.posix.resolve(buildWorkdir, p));
log(`build context: ${files.length} files -> ${scratch}`);
for (const step of build.steps) {
  if (step.op === 'WORKDIR') {
    buildWorkdir = path.posix.resolve(buildWorkdir, step.rest);
    fs.mkdirSync(inBuild('.'), { recursive: true });
  } else if (step.op === 'COPY' || step.op === 'ADD') {
    const { flags, words } = splitCopy(step.rest);
    if (flags.from) throw new Error(`build stage: COPY --from is not replayed: ${step.rest}`);
    const dst = words.at(-1);
    // The replay copies the whole context once; a partial COPY (the manifests first, for the
    // layer cache) is covered by it, as long as everything lands in WORKDIR.
    if (
      path.posix.resolve(buildWorkdir, dst) !== buildWorkdir &&
      !words
        .slice(0, -1)
        .every(
          (src) =>
            path.posix.resolve(
              buildWorkdir,
              dst.endsWith('/') ? `${dst}${path.posix.basename(src)}` : dst,
            ) === path.posix.resolve(buildWorkdir, src),
        )
    ) {
      throw new Error(
        `build stage: only context copies into WORKDIR are replayed: COPY ${step.rest}`,
      );
    }
    if (!contextCopied) {
      contextCopied = true;
      for (const f of files) {
        const to = path.join(inBuild('.'), f);
        fs.mkdirSync(path.dirname(to), { recursive: true });
        fs.cpSync(path.join(REPO, f), to, { verbatimSymlinks: true, preserveTimestamps: true });
      }
    }
  } else if (step.op === 'RUN') {
    if (/\bapt-get\b/.test(step.rest)) {
      log(`skipped (system packages): RUN ${step.rest}`);
      continue;
    }
    const argv = step.rest.startsWith('[') ? JSON.parse(step.rest) : ['/bin/sh', '-c', step.rest];
    log(`RUN ${step.rest}`);
    const r = spawnSync(argv[0], argv.slice(1), { cwd: inBuild('.'), stdio: 'inherit' });
    if (r.status !== 0) {
      log(`build step failed (${r.status ?? r.signal}); scratch kept at ${scratch}`);
      process.exit(1);
    }
  } else if (!['ENV', 'ARG', 'LABEL', 'SHELL', 'USER'].includes(step.op)) {
    throw new Error(`build stage: ${step.op} is not replayed`);
  }
}

// ---- final stage: only the COPY --from=build steps put files in the tree
let workdir = '/';
let root;
for (const step of final.steps) {
  if (step.op === 'WORKDIR') {
    workdir = path.posix.resolve(workdir, step.rest);
    root ??= workdir;
  } else if (step.op === 'COPY' || step.op === 'ADD') {
    const { flags, words } = splitCopy(step.rest);
    if (step.op !== 'COPY' || flags.from !== 'build') {
      throw new Error(
        `final stage: only COPY --from=build is replayed, got ${step.op} ${step.rest}`,
      );
    }
    root ??= workdir;
    const dst = path.posix.resolve(workdir, words.at(-1));
    if (dst !== root && !dst.startsWith(`${root}/`)) {
      throw new Error(`final stage: ${dst} is outside the WORKDIR ${root} the tree stands for`);
    }
    const srcs = words.slice(0, -1);
    const intoDir = words.at(-1).endsWith('/') || srcs.length > 1;
    for (const src of srcs) {
      if (/[*?[]/.test(src)) throw new Error(`final stage: wildcards are not replayed: ${src}`);
      const from = path.join(buildRoot, path.posix.resolve(buildWorkdir, src));
      const st = fs.lstatSync(from, { throwIfNoEntry: false });
      if (!st) throw new Error(`COPY --from=build ${src}: not in the build stage`);
      const to = path.join(
        out,
        path.posix.relative(
          root,
          st.isDirectory() || !intoDir ? dst : `${dst}/${path.posix.basename(src)}`,
        ),
      );
      fs.mkdirSync(st.isDirectory() ? to : path.dirname(to), { recursive: true });
      // A directory's contents go into dst; symbolic links inside it are copied as links.
      fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    }
  } else if (step.op === 'RUN') {
    log(`skipped (image filesystem): RUN ${step.rest}`);
  }
}
fs.mkdirSync(out, { recursive: true });
if (!keepBuild) remove(scratch);
fs.writeFileSync(stamp, `${digest}\n`);
log(`staged ${out} (${digest.slice(0, 12)})`);
