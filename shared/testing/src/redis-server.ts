import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A TCP port nothing listens on at the moment of asking, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
  });
}

/**
 * A Redis of a test's own (engines.sh installs the binary; GUARD_REDIS_SERVER names another),
 * without persistence: killed and started again on the same port, it comes back empty, as a
 * restarted Redis without a volume does. Tests that stop Redis use this one, never the shared one.
 */
export function startRedisServer(port: number): ChildProcess {
  const bin = process.env.GUARD_REDIS_SERVER ?? 'redis-server';
  const child = spawn(
    bin,
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  child.once('error', (err) => {
    throw new Error(`cannot start ${bin} (set GUARD_REDIS_SERVER): ${err.message}`);
  });
  return child;
}

/** SIGKILL (a crash, nothing flushed); resolves once the process is gone. */
export function stopRedisServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    server.once('exit', () => resolve());
    server.kill('SIGKILL');
  });
}
