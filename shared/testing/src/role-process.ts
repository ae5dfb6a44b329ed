import { spawn, type ChildProcess } from 'node:child_process';

/** A role of the distributed mode (or a test entry of one) run as a process of its own. */
export interface RoleProcess {
  name: string;
  child: ChildProcess;
  /** Its JSON log lines, parsed. */
  logs: Record<string, unknown>[];
  /** Every line it wrote, stdout and stderr, for failure messages. */
  output: string[];
}

/**
 * Starts `entry` from source (`--conditions=source` with tsx, as the integration tier runs code:
 * it does not build `dist` first) with `args`, on top of this process's environment plus
 * `NODE_ENV=production`, `GUARD_LOG_LEVEL=info` and `env`; collects its log lines.
 */
export function spawnRole(
  name: string,
  entry: string,
  env: Record<string, string>,
  args: string[] = [],
): RoleProcess {
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', entry, ...args],
    {
      env: { ...process.env, NODE_ENV: 'production', GUARD_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return watchRole(name, child);
}

/** A started process as a RoleProcess: its stdout parsed into log lines, everything kept. */
export function watchRole(name: string, child: ChildProcess): RoleProcess {
  const role: RoleProcess = { name, child, logs: [], output: [] };
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      role.output.push(line);
      try {
        role.logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => role.output.push(d.toString()));
  return role;
}

/** Resolves once `GET url` answers 200; fails when the role exits first or `withinMs` passes. */
export async function waitUntilReady(
  role: RoleProcess,
  url: string,
  withinMs = 45_000,
): Promise<void> {
  const end = Date.now() + withinMs;
  for (;;) {
    if (role.child.exitCode !== null)
      throw new Error(`${role.name} exited:\n${role.output.join('\n')}`);
    const ready = await fetch(url)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ready) return;
    if (Date.now() > end)
      throw new Error(`${role.name} not ready in ${withinMs} ms:\n${role.output.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How a process ended (at once when it already has). */
export const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

/**
 * SIGTERM to every role still running, SIGKILL to one still there after `killAfterMs` (a role
 * stuck in its stop must not hold the suite); resolves when all have exited.
 */
export async function stopRoles(roles: RoleProcess[], killAfterMs = 15_000): Promise<void> {
  for (const r of roles) {
    if (r.child.exitCode !== null || r.child.signalCode) continue;
    r.child.kill();
    const timer = setTimeout(() => {
      if (r.child.exitCode === null && !r.child.signalCode) r.child.kill('SIGKILL');
    }, killAfterMs);
    timer.unref();
    void exitOf(r.child).then(() => clearTimeout(timer));
  }
  await Promise.all(roles.map((r) => exitOf(r.child)));
}
