// globalSetup of the vitest `integration` project: leases real engines from engines.sh (starting
// the missing ones, or taking REDIS_URL, KAFKA_BROKERS, CASSANDRA_CONTACT_POINTS,
// TEMPORAL_ADDRESS as given), checks each endpoint answers, and hands the endpoints to tests
// through provide/inject. Teardown releases the lease; engines.sh stops only what a test run
// started, and only once no other test run in this checkout still holds a lease.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

export interface EngineEndpoints {
  redisUrl: string;
  kafkaBrokers: string[];
  cassandraContactPoints: string[];
  cassandraLocalDc: string;
  temporalAddress: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    engines: EngineEndpoints;
  }
}

const script = fileURLToPath(new URL('./engines.sh', import.meta.url));

function runScript(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // stderr carries progress and, on failure, the engine's log tail: show it as it comes.
    const child = spawn('bash', [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`engines.sh ${args.join(' ')} exited with ${code}`)),
    );
  });
}

function parseEnv(out: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  return env;
}

function required(env: Map<string, string>, name: string): string {
  const value = env.get(name);
  if (!value) throw new Error(`engines.sh reported no ${name}`);
  return value;
}

function hostPort(endpoint: string, defaultPort: number): { host: string; port: number } {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)
    ? new URL(endpoint)
    : new URL(`tcp://${endpoint}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return { host, port: url.port ? Number(url.port) : defaultPort };
}

// A wrong REDIS_URL or a stopped docker-compose should fail here in one line, not as a
// timeout inside each test file.
function probe(name: string, endpoint: string, defaultPort: number): Promise<void> {
  const { host, port } = hostPort(endpoint, defaultPort);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, timeout: 5_000 });
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(`${name}=${endpoint}: nothing answers on ${host}:${port} (${why})`));
    };
    socket.once('connect', () => {
      socket.end();
      resolve();
    });
    socket.once('timeout', () => fail('timed out after 5 s'));
    socket.once('error', (err) => fail(err.message));
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const holder = String(process.pid);
  const env = parseEnv(await runScript(['acquire', holder]));
  const release = async () => {
    await runScript(['release', holder]);
  };
  try {
    const list = (value: string) =>
      value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    const endpoints: EngineEndpoints = {
      redisUrl: required(env, 'REDIS_URL'),
      kafkaBrokers: list(required(env, 'KAFKA_BROKERS')),
      cassandraContactPoints: list(required(env, 'CASSANDRA_CONTACT_POINTS')),
      cassandraLocalDc: env.get('CASSANDRA_LOCAL_DC') ?? 'datacenter1',
      temporalAddress: required(env, 'TEMPORAL_ADDRESS'),
    };
    await Promise.all([
      probe('REDIS_URL', endpoints.redisUrl, 6379),
      ...endpoints.kafkaBrokers.map((b) => probe('KAFKA_BROKERS', b, 9092)),
      ...endpoints.cassandraContactPoints.map((c) => probe('CASSANDRA_CONTACT_POINTS', c, 9042)),
      probe('TEMPORAL_ADDRESS', endpoints.temporalAddress, 7233),
    ]);
    project.provide('engines', endpoints);
  } catch (err) {
    await release();
    throw err;
  }
  return release;
}
