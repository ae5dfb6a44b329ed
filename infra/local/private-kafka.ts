// A Kafka broker of its own for a test that stops and starts its broker. The shared broker of
// engines.sh must not be restarted under other test files, and engines.sh starts Kafka on a fresh
// log directory every time, which would lose the topic, the committed offsets and the idempotent
// producers' state: not what a broker restart in production does. This one keeps its data
// directory across restarts. It runs the same jars (engines.sh's classpath) and settings.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const CLUSTER_ID = 'pRvT8kVnQ2u9c3Xq1yZ5Lw';

export interface PrivateKafka {
  brokers: string[];
  /** Stops the broker: SIGTERM (controlled shutdown) or SIGKILL; resolves when it has exited. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same ports and data; resolves when it serves. */
  start(): Promise<void>;
  /** Stops it and deletes its data. */
  close(): Promise<void>;
  logFile: string;
}

function java17(): string {
  if (process.env.GUARD_JAVA) return process.env.GUARD_JAVA;
  const jvm = '/usr/lib/jvm';
  const candidates = existsSync(jvm)
    ? readdirSync(jvm)
        .filter((d) => /^java-17-openjdk/.test(d))
        .map((d) => path.join(jvm, d, 'bin/java'))
    : [];
  const found = candidates.find((j) => existsSync(j));
  if (!found) throw new Error('JDK 17 not found (set GUARD_JAVA)');
  return found;
}

function kafkaClasspath(): string {
  const dir = path.resolve(process.env.GUARD_ENGINES_DIR ?? path.join(repo, '.engines'));
  const file = path.join(dir, 'kafka', 'classpath');
  if (!existsSync(file) || statSync(file).size === 0) {
    const r = spawnSync('bash', [path.join(here, 'engines.sh'), 'install', 'kafka'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (r.status !== 0) throw new Error('engines.sh install kafka failed');
  }
  return readFileSync(file, 'utf8').trim();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startPrivateKafka(): Promise<PrivateKafka> {
  const java = java17();
  const classpath = kafkaClasspath();
  const dir = mkdtempSync(path.join(tmpdir(), 'guard-private-kafka-'));
  const [port, controller] = [await freePort(), await freePort()];
  const props = path.join(dir, 'server.properties');
  const logFile = path.join(dir, 'stdout.log');
  writeFileSync(
    props,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controller}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${path.join(dir, 'data')}`,
      'num.partitions=1',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      'auto.create.topics.enable=false',
      '',
    ].join('\n'),
  );
  const jopts = [
    '-Xms256m',
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${path.join(here, 'kafka/log4j.properties')}`,
    `-Dkafka.logs.dir=${dir}`,
    '-cp',
    classpath,
  ];
  const format = spawnSync(
    java,
    [...jopts, 'kafka.tools.StorageTool', 'format', '-t', CLUSTER_ID, '-c', props],
    { encoding: 'utf8' },
  );
  if (format.status !== 0) throw new Error(`kafka storage format failed: ${format.stderr}`);

  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    const offset = existsSync(logFile) ? statSync(logFile).size : 0;
    const fd = openSync(logFile, 'a');
    child = spawn(java, [...jopts, 'kafka.Kafka', props], {
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    const proc = child;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const end = Date.now() + 120_000;
    for (;;) {
      if (proc.exitCode !== null)
        throw new Error(`private kafka exited at start (log: ${logFile})`);
      const log = readFileSync(logFile, 'utf8').slice(offset);
      if (log.includes('Kafka Server started') && (await portOpen(port))) return;
      if (Date.now() > end) throw new Error(`private kafka not ready in 120 s (log: ${logFile})`);
      await sleep(200);
    }
  };

  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    // Its own process group: the JVM and anything it started.
    process.kill(-proc.pid!, signal);
    const timer = setTimeout(() => {
      if (proc.exitCode === null && proc.signalCode === null) process.kill(-proc.pid!, 'SIGKILL');
    }, 30_000);
    await exited;
    clearTimeout(timer);
    child = null;
  };

  await start();
  return {
    brokers: [`127.0.0.1:${port}`],
    logFile,
    start,
    stop,
    close: async () => {
      await stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
