import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startGuard, type GuardServer } from './support/guard-server.js';
import { fencedBlocks, headingAnchors, linkTargets, type FencedBlock } from './support/markdown.js';

/**
 * The README runs as written. Convention for its fenced blocks:
 * - ```sh: run by this test, every one, in document order, concatenated into one
 *   `bash -euo pipefail` process (so variables carry from block to block);
 * - ```sh norun: for the reader to run by hand (npm install, npm start, and the one block that
 *   exports GUARD and KEY, which this test provides itself from the server it starts);
 * - any other language (text, json, ...): an example, never run.
 * A comment `# prints: X` in a run block claims that the block's standard output contains X;
 * each claim is checked. Inside the run, curl fails on an HTTP error status (--fail-with-body)
 * unless the command prints the status itself with -w, so a step that silently answers 4xx
 * fails the test too.
 */

const README = path.join(ROOT, 'README.md');
const DOCS = path.join(ROOT, 'docs');

const readme = fs.readFileSync(README, 'utf8');
const blocks = fencedBlocks(readme);
const isRun = (b: FencedBlock) => b.lang === 'sh' && !b.attrs.includes('norun');
const runBlocks = blocks.filter(isRun);
const claimsOf = (b: FencedBlock) =>
  [...b.code.matchAll(/#\s*prints:\s*(.+?)\s*$/gm)].map((m) => m[1]!);

const PRELUDE = `
curl() {
  case " $* " in
    *" -w "* | *" --write-out "*) command curl "$@" ;;
    *) command curl --fail-with-body "$@" ;;
  esac
}
set -E
trap 'echo "README command failed (exit $?): $BASH_COMMAND" >&2' ERR
`;
const marker = (i: number) => `::readme-block ${i}::`;

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run shell blocks in one bash process, each preceded by a marker line on stdout. */
function runBlocksInBash(server: GuardServer, codes: string[]): Promise<RunResult> {
  const script = PRELUDE + codes.map((c, i) => `printf '\\n%s\\n' '${marker(i)}'\n${c}\n`).join('');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // vitest sets MODE=test for itself; the guard CLI reads MODE like the server does.
    MODE: 'embedded',
    GUARD: server.url,
    KEY: server.adminKey,
    GUARD_DATA_DIR: server.dataDir,
  };
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The stdout of block i: between its marker and the next one. */
function outputOf(stdout: string, i: number): string {
  const start = stdout.indexOf(marker(i));
  if (start < 0) return '';
  const end = stdout.indexOf(marker(i + 1), start);
  return stdout.slice(start + marker(i).length, end < 0 ? undefined : end);
}

describe('README.md', () => {
  it('leaves GUARD and KEY to one block the reader fills in, which the test provides', () => {
    const setup = blocks.filter(
      (b) => b.lang === 'sh' && b.attrs.includes('norun') && /^export (GUARD|KEY)=/m.test(b.code),
    );
    expect(setup).toHaveLength(1);
    expect(setup[0]!.code).toMatch(/^export GUARD=http:\/\/127\.0\.0\.1:8080$/m);
    expect(setup[0]!.code).toMatch(/^export KEY=/m);
    expect(setup[0]!.line, 'the setup block comes before the first block that is run').toBeLessThan(
      runBlocks[0]!.line,
    );
    for (const b of runBlocks)
      expect(b.code, `block at line ${b.line}`).not.toMatch(/^\s*(export\s+)?(GUARD|KEY)=/m);
    // A claim outside a run block would never be checked.
    for (const b of blocks.filter((x) => !isRun(x)))
      expect(claimsOf(b), `block at line ${b.line}`).toEqual([]);
    expect(runBlocks.length).toBeGreaterThanOrEqual(10);
  });

  it('points nowhere outside the repository', () => {
    expect(readme).not.toMatch(/\.\.\/shared\b/);
    expect(readme).not.toMatch(/\/work\/shared\b/);
  });

  it('links, like docs/*.md, only to files and headings that exist in the repository', () => {
    const files = [
      README,
      ...fs
        .readdirSync(DOCS)
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join(DOCS, f)),
    ];
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const target of linkTargets(fs.readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        checked++;
        const [rel = '', anchor] = target.split('#');
        const resolved =
          rel === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(rel));
        const from = path.relative(ROOT, file);
        if (path.relative(ROOT, resolved).startsWith('..'))
          broken.push(`${from}: ${target} leaves the repository`);
        else if (!fs.existsSync(resolved)) broken.push(`${from}: ${target} does not exist`);
        else if (
          anchor &&
          resolved.endsWith('.md') &&
          !headingAnchors(fs.readFileSync(resolved, 'utf8')).has(anchor)
        ) {
          broken.push(`${from}: ${target} names no heading of ${path.relative(ROOT, resolved)}`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});

// The walkthrough runs the `guard` CLI on the data directory of a server it starts: skipped
// against E2E_BASE_URL.
describe.skipIf(!!process.env.E2E_BASE_URL)('README.md walkthrough', () => {
  let server: GuardServer;
  beforeAll(async () => {
    server = await startGuard();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('runs every sh block top to bottom against a started server, and says what it prints', async () => {
    const r = await runBlocksInBash(
      server,
      runBlocks.map((b) => b.code),
    );
    const failedAt = [...r.stdout.matchAll(/::readme-block (\d+)::/g)].at(-1)?.[1];
    const where =
      failedAt === undefined
        ? 'before the first block'
        : `in the block at README.md line ${runBlocks[Number(failedAt)]!.line}`;
    expect(
      r.code,
      `the walkthrough failed ${where}:\n${r.stdout.slice(-3000)}\n--- stderr ---\n${r.stderr.slice(-3000)}\n--- server ---\n${server.logs.slice(-30).join('\n')}`,
    ).toBe(0);
    let claims = 0;
    runBlocks.forEach((b, i) => {
      const out = outputOf(r.stdout, i);
      for (const claim of claimsOf(b)) {
        claims++;
        expect(out, `README.md line ${b.line} claims "${claim}"`).toContain(claim);
      }
    });
    expect(claims).toBeGreaterThanOrEqual(10);
  }, 180_000);

  it('is run so that a failing command fails the test', async () => {
    const r = await runBlocksInBash(server, [
      'curl -sS "$GUARD/healthz" >/dev/null',
      'curl -sS "$GUARD/policies/000000000000000000000abc" -H "Authorization: Bearer $KEY"\necho "still running"',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain('"error_code":"NOT_FOUND"');
    expect(r.stdout).not.toContain('still running');
    expect(r.stderr).toContain('README command failed');
  }, 60_000);
});
