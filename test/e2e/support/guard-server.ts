import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MAIN = path.join(ROOT, 'services/standalone/dist/main.js');

export interface GuardServer {
  url: string;
  dataDir: string;
  /** Admin key of the default org created at first start. */
  adminKey: string;
  process: ChildProcess;
  logs: string[];
  stop: () => Promise<number | null>;
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
    // Export activity as soon as it is recorded. The suite's activity reads poll
    // (support/activity-http.ts), so they also hold against a server that settles later.
    GUARD_ACTIVITY_SETTLE_MS: '0',
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
  // Resolves with the exit code, or null when a signal ended the process (then logged, since a
  // server stopped with SIGTERM exits 0 by itself).
  const stop = () =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once('exit', (code, signal) => {
        if (signal) logs.push(`[harness] server ended by ${signal}, not by exiting`);
        resolve(code);
      });
      child.kill('SIGTERM');
    });
  return { url: `http://127.0.0.1:${port}`, dataDir, adminKey, process: child, logs, stop };
}

/** The server a test that needs nothing but HTTP talks to. */
export interface TargetServer {
  url: string;
  /** A staff admin key of the `default` org. */
  adminKey: string;
  /** True when this is the server at E2E_BASE_URL, not one this suite started. */
  external: boolean;
  /** The server started here, for checks on its process, logs or files; undefined if external. */
  local: GuardServer | undefined;
  /** Stops a server started here; leaves an external one running. */
  stop: () => Promise<void>;
}

/**
 * The server for tests that only need HTTP. With E2E_BASE_URL and E2E_STAFF_KEY set (a running
 * deployment and a staff admin key of its `default` org), that server, shared by every file;
 * otherwise one started here with `opts`, whose env only tunes a server started here. Tests that
 * must own the process (restart it, signal it, read its logs, start it with an env they depend
 * on) call startGuard and are skipped when E2E_BASE_URL is set.
 */
export async function targetServer(opts: StartOptions = {}): Promise<TargetServer> {
  const base = process.env.E2E_BASE_URL;
  if (base) {
    const key = process.env.E2E_STAFF_KEY;
    if (!key) throw new Error('E2E_BASE_URL is set without E2E_STAFF_KEY (a staff admin key)');
    return {
      url: base.replace(/\/+$/, ''),
      adminKey: key,
      external: true,
      local: undefined,
      stop: async () => {},
    };
  }
  const server = await startGuard(opts);
  return {
    url: server.url,
    adminKey: server.adminKey,
    external: false,
    local: server,
    stop: async () => {
      await server.stop();
    },
  };
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

/**
 * Calls `read` until `done` holds for its answer or `withinMs` has passed (every 100 ms), and
 * answers the last answer. For changes that one process applies at once and the others of a
 * deployment within GUARD_AUTH_CACHE_TTL_MS (orgs, keys and policies are cached per process):
 * `withinMs` 0 asks once.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (answer: T) => boolean,
  withinMs: number,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const answer = await read();
    if (done(answer) || Date.now() >= deadline) return answer;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How long a change made through one process may take to reach the others of `server`. */
export const settleWithin = (server: TargetServer): number => (server.external ? 10_000 : 0);
