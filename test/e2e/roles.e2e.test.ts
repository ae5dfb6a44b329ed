import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDataDir } from './support/guard-server.js';

/**
 * `services/standalone/dist/role.js`, the one entry point of every process (as one image runs
 * them): ROLE names the process (a distributed role, or standalone, the default); MODE, when set,
 * must agree. Runs local processes only: skipped against E2E_BASE_URL.
 */
const ROLE_JS = path.join(ROOT, 'services/standalone/dist/role.js');

function run(env: Record<string, string>, until?: RegExp) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [ROLE_JS], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stopped = false;
    const take = (d: Buffer) => {
      out += d.toString();
      // Once: a second signal means "exit now" (code 1).
      if (!stopped && until?.test(out)) stopped = child.kill('SIGTERM');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe.skipIf(!!process.env.E2E_BASE_URL)('one entry point for every role', () => {
  it('runs the standalone server by default, and stops cleanly', async () => {
    const r = await run(
      { PORT: '0', GUARD_DATA_DIR: tempDataDir(), GUARD_WORKERS: '1' },
      /"guard listening"/,
    );
    expect(r.out).toContain('"mode":"embedded"');
    expect(r.code).toBe(0);
  });

  it('runs ROLE=standalone as the standalone server', async () => {
    const r = await run(
      { ROLE: 'standalone', PORT: '0', GUARD_DATA_DIR: tempDataDir(), GUARD_WORKERS: '1' },
      /"guard listening"/,
    );
    expect(r.out).toContain('"mode":"embedded"');
    expect(r.code).toBe(0);
  });

  it('hands MODE=distributed to the role ROLE names (here the scorer, which wants REDIS_URL)', async () => {
    const r = await run({ MODE: 'distributed', ROLE: 'scorer' });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/Invalid configuration:[\s\S]*REDIS_URL/);
  });

  it('runs a distributed role from ROLE alone, without MODE', async () => {
    for (const [role, setting] of [
      ['scorer', 'REDIS_URL'],
      ['api', 'REDIS_URL'],
      ['activity-ingester', 'KAFKA_BROKERS'],
      ['jobs-worker', 'TEMPORAL_ADDRESS'],
    ] as const) {
      const r = await run({ ROLE: role });
      expect(r.code, r.out).not.toBe(0);
      expect(r.code, r.out).not.toBe(2);
      expect(r.out).toMatch(new RegExp(`Invalid configuration:[\\s\\S]*${setting}`));
    }
  });

  it('refuses an unknown role or mode, naming what it takes', async () => {
    const role = await run({ MODE: 'distributed', ROLE: 'db' });
    expect(role.code).toBe(2);
    expect(role.out).toContain('ROLE=api|scorer|activity-ingester|jobs-worker; got ROLE="db"');
    const mode = await run({ MODE: 'cluster' });
    expect(mode.code).toBe(2);
    expect(mode.out).toContain('MODE must be embedded or distributed; got "cluster"');
    const alone = await run({ ROLE: 'db' });
    expect(alone.code).toBe(2);
    expect(alone.out).toContain(
      'ROLE must be standalone|api|scorer|activity-ingester|jobs-worker; got ROLE="db"',
    );
  });

  it('refuses a MODE that contradicts ROLE', async () => {
    const embedded = await run({ MODE: 'embedded', ROLE: 'api' });
    expect(embedded.code).toBe(2);
    expect(embedded.out).toContain(
      'MODE=embedded runs ROLE=standalone (or no ROLE); got ROLE="api"',
    );
    const distributed = await run({ MODE: 'distributed', ROLE: 'standalone' });
    expect(distributed.code).toBe(2);
    expect(distributed.out).toContain(
      'MODE=distributed runs ROLE=api|scorer|activity-ingester|jobs-worker; got ROLE="standalone"',
    );
    const none = await run({ MODE: 'distributed' });
    expect(none.code).toBe(2);
    expect(none.out).toContain('got ROLE=""');
  });
});
