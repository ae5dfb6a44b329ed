import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MAIN = path.join(ROOT, 'services/standalone/dist/main.js');
const CLI = path.join(ROOT, 'services/standalone/dist/cli.js');

export interface GuardServer {
  url: string;
  dataDir: string;
  /** Admin key of the default org created at first start. */
  adminKey: string;
  process: ChildProcess;
  logs: string[];
  stop: () => Promise<number | null>;
  /** Run the `guard` CLI against this server's data directory; returns parsed --json output. */
  cli: <T = unknown>(...args: string[]) => T;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  adminKey?: string;
}

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'guard-e2e-'));
}

/**
 * Start the compiled standalone server as its own process, as a user would with `npm start`,
 * on a free port with its own data directory. The e2e global setup has built the project.
 */
export async function startGuard(opts: StartOptions = {}): Promise<GuardServer> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const adminKey =
    opts.adminKey ??
    `gk_e2e_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const env = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    GUARD_DATA_DIR: dataDir,
    GUARD_BOOTSTRAP_ADMIN_KEY: adminKey,
    GUARD_LOG_LEVEL: 'info',
    // vitest sets MODE=test for its own use; the server reads MODE too.
    MODE: 'embedded',
    // One process keeps test servers light; workers.e2e.test.ts covers GUARD_WORKERS > 1.
    GUARD_WORKERS: '1',
    ...opts.env,
  };
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start:\n${logs.join('\n')}`)),
      20_000,
    );
    const onLine = (line: string) => {
      logs.push(line);
      if (line.includes('"guard listening"')) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    };
    readline.createInterface({ input: child.stdout! }).on('line', onLine);
    readline.createInterface({ input: child.stderr! }).on('line', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${logs.join('\n')}`));
    });
  });
  const stop = () =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  const cli = <T>(...args: string[]): T => {
    const r = spawnSync(process.execPath, [CLI, ...args, '--json'], {
      env: { ...process.env, MODE: 'embedded', GUARD_DATA_DIR: dataDir },
      encoding: 'utf8',
    });
    if (r.status !== 0)
      throw new Error(`guard ${args.join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  return { url: `http://127.0.0.1:${port}`, dataDir, adminKey, process: child, logs, stop, cli };
}

export interface Res<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** A tiny JSON client bound to a base URL and an API key. */
export function client(
  baseUrl: string,
  key: string | null,
  header: 'bearer' | 'x-api-key' | 'x-goog-api-key' = 'bearer',
) {
  const call = async <T = any>(
    method: string,
    p: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<Res<T>> => {
    const headers: Record<string, string> = { ...extraHeaders };
    if (key) {
      if (header === 'bearer') headers.authorization = `Bearer ${key}`;
      else headers[header] = key;
    }
    let payload: string | undefined;
    if (body !== undefined) {
      headers['content-type'] ??= 'application/json';
      payload = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const res = await fetch(baseUrl + p, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
  return {
    get: <T = any>(p: string) => call<T>('GET', p),
    post: <T = any>(p: string, body?: unknown, h?: Record<string, string>) =>
      call<T>('POST', p, body, h),
    put: <T = any>(p: string, body?: unknown) => call<T>('PUT', p, body),
    del: <T = any>(p: string) => call<T>('DELETE', p),
    call,
  };
}
export type Client = ReturnType<typeof client>;

/** A second org with an admin and a member key, made through the CLI. */
export function makeOrg(
  server: GuardServer,
  name: string,
  kind: 'standard' | 'red_team' = 'standard',
) {
  const org = server.cli<{ id: string }>('org', 'create', '--name', name, '--kind', kind);
  const admin = server.cli<{ key: string; id: string }>(
    'key',
    'create',
    '--org',
    org.id,
    '--role',
    'admin',
    '--user',
    `${name}-admin`,
  );
  const member = server.cli<{ key: string; id: string }>(
    'key',
    'create',
    '--org',
    org.id,
    '--role',
    'member',
    '--user',
    `${name}-member`,
  );
  return {
    orgId: org.id,
    adminKey: admin.key,
    adminKeyId: admin.id,
    memberKey: member.key,
    memberKeyId: member.id,
  };
}
