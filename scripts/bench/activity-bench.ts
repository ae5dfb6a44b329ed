/**
 * The distributed activity path, end to end, on real engines: N activities published through
 * KafkaActivitySink as fast as one producer goes, the ingester (its own process, as in
 * production: `services/activity-ingester/src/main.ts`) writing them to Cassandra, then the
 * export's read rate (`list` pages) from Cassandra, and the embedded SQLite store's on the same
 * rows.
 *
 *   npm run bench:activity -- [--n 100000] [--orgs 10] [--partitions 6] [--concurrency 6]
 *                             [--max-batch 1000] [--linger 5] [--backlog] [--json FILE]
 *
 * By default the ingester runs while the activities are produced (what production sees). With
 * --backlog it starts only once all N are in the topic, so its rate is not shared with the
 * producer: what a lagging ingester catching up does.
 *
 * Engines: leases Kafka and Cassandra from infra/local/engines.sh (starting them when they are
 * not running, stopping what it started at the end), or takes KAFKA_BROKERS and
 * CASSANDRA_CONTACT_POINTS. Everything it creates (topic, consumer group, keyspace, SQLite file)
 * is named after this run and removed at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from 'cassandra-driver';
import { Kafka, logLevel } from 'kafkajs';
import type { Activity, ActivityStore } from '@guard/domain';
import { openSqlite, SqliteActivityStore } from '@guard/adapters';
import { CassandraActivityStore } from '@guard/adapters/cassandra/cassandra-activity-store';
import { KafkaActivitySink } from '@guard/adapters/kafka/kafka-activity-sink';
import { aRecordedActivity } from '@guard/testing/recorded-activity';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENGINES = path.join(ROOT, 'infra/local/engines.sh');
const INGESTER_MAIN = path.join(ROOT, 'services/activity-ingester/src/main.ts');

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '100000' },
    orgs: { type: 'string', default: '10' },
    partitions: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '6' },
    'max-batch': { type: 'string', default: '1000' },
    linger: { type: 'string', default: '5' },
    backlog: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const BACKLOG = values.backlog;
const N = Number(values.n);
const ORGS = Array.from({ length: Number(values.orgs) }, (_, i) => `bench-org-${i}`);
const PARTITIONS = Number(values.partitions);
const TARGET_INGEST = 20_000;
const TARGET_EXPORT = 50_000;

const run = `${process.pid}_${Date.now().toString(36)}`;
const topic = `bench.activity.${run}.v1`;
const keyspace = `bench_activity_${run}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

function parseEnvLines(out: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  return env;
}

/** Endpoints: from the environment, else a lease on engines.sh's Kafka and Cassandra. */
function leaseEngines(): { brokers: string[]; contactPoints: string[]; localDc: string } {
  const r = spawnSync('bash', [ENGINES, 'acquire', String(process.pid), 'kafka', 'cassandra'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error('engines.sh acquire failed');
  const env = parseEnvLines(r.stdout);
  const list = (v: string | undefined) => (v ?? '').split(',').filter(Boolean);
  return {
    brokers: list(env.get('KAFKA_BROKERS')),
    contactPoints: list(env.get('CASSANDRA_CONTACT_POINTS')),
    localDc: env.get('CASSANDRA_LOCAL_DC') ?? 'datacenter1',
  };
}

function releaseEngines(): void {
  spawnSync('bash', [ENGINES, 'release', String(process.pid), 'kafka', 'cassandra'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** CPU seconds (user + system) a process has used, from /proc; null where it cannot be read. */
function cpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return ticks / 100;
  } catch {
    return null;
  }
}

function enginePid(engine: string): number | undefined {
  try {
    const dir = process.env.GUARD_ENGINES_DIR ?? path.join(ROOT, '.engines');
    return Number(readFileSync(path.join(dir, engine, 'pid'), 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

interface IngesterStats {
  batches: number;
  chunks: number;
  written: number;
  poisoned: number;
  retries: number;
  parseMs: number;
  writeMs: number;
  dlqMs: number;
  commitMs: number;
  firstWriteAt: number | null;
  lastWriteAt: number | null;
}

/** The ingester as its own process; resolves once it is ready, with its final stats to come. */
async function startIngester(env: NodeJS.ProcessEnv, port: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', INGESTER_MAIN],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let resolveStats: (s: IngesterStats) => void = () => undefined;
  const stats = new Promise<IngesterStats>((resolve) => (resolveStats = resolve));
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; level?: number } & IngesterStats;
      if (entry.msg === 'ingester stopped') resolveStats(entry);
      else if ((entry.level ?? 0) >= 40) process.stderr.write(`[ingester] ${line.slice(0, 400)}\n`);
    } catch {
      process.stderr.write(`[ingester] ${line}\n`);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const end = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error('the ingester exited during start-up');
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ready) break;
    if (Date.now() > end) throw new Error('the ingester was not ready in 120 s');
    await sleep(200);
  }
  return { child, stats, exited };
}

/** Waits until the group has committed every produced offset (commits follow the writes). */
async function waitForLag0(kafka: Kafka, groupId: string, timeoutMs: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const end = Date.now() + timeoutMs;
    const high = new Map(
      (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]),
    );
    for (;;) {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const done = (committed?.partitions ?? []).every(
        (p) => BigInt(p.offset === '-1' ? '0' : p.offset) >= (high.get(p.partition) ?? 0n),
      );
      if (done && committed?.partitions.length === high.size) return;
      if (Date.now() > end) throw new Error('ingestion did not finish in time');
      await sleep(100);
    }
  } finally {
    await admin.disconnect();
  }
}

/** Reads every org's activity back in pages of `limit`; rows/s over the whole read. */
async function exportRate(
  store: ActivityStore,
  limit: number,
): Promise<{ rows: number; rate: number }> {
  const t0 = performance.now();
  let rows = 0;
  for (const org of ORGS) {
    let after: string | undefined;
    for (;;) {
      const page = await store.list(org, { after, limit });
      rows += page.items.length;
      if (!page.has_more || page.items.length === 0) break;
      after = page.items[page.items.length - 1]!.id;
    }
  }
  return { rows, rate: rows / ((performance.now() - t0) / 1000) };
}

async function main(): Promise<void> {
  const lease = !(process.env.KAFKA_BROKERS && process.env.CASSANDRA_CONTACT_POINTS);
  const engines = lease
    ? leaseEngines()
    : {
        brokers: process.env.KAFKA_BROKERS!.split(','),
        contactPoints: process.env.CASSANDRA_CONTACT_POINTS!.split(','),
        localDc: process.env.CASSANDRA_LOCAL_DC ?? 'datacenter1',
      };
  const cassandra = new Client({
    contactPoints: engines.contactPoints,
    localDataCenter: engines.localDc,
  });
  const kafka = new Kafka({
    clientId: `bench-${run}`,
    brokers: engines.brokers,
    logLevel: logLevel.NOTHING,
  });
  const sqliteDir = mkdtempSync(path.join(os.tmpdir(), 'guard-activity-bench-'));
  let ingester: Awaited<ReturnType<typeof startIngester>> | null = null;
  const admin = kafka.admin();
  try {
    await cassandra.connect();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: PARTITIONS, replicationFactor: 1 },
        { topic: `${topic}.dlq`, numPartitions: 1, replicationFactor: 1 },
      ],
    });

    const activities: Activity[] = Array.from({ length: N }, (_, i) =>
      aRecordedActivity(ORGS[i % ORGS.length]!, i),
    );
    const bytes = activities.reduce((n, a) => n + JSON.stringify(a).length, 0);
    log(`${fmt(N)} activities, ${ORGS.length} orgs, ~${Math.round(bytes / N)} bytes each`);

    const port = 20_000 + (process.pid % 20_000);
    const groupId = `bench-${run}`;
    const ingesterEnv = {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      GUARD_LOG_LEVEL: 'info',
      KAFKA_BROKERS: engines.brokers.join(','),
      KAFKA_ACTIVITY_TOPIC: topic,
      KAFKA_CONSUMER_GROUP: groupId,
      KAFKA_CREATE_TOPICS: 'false',
      INGESTER_PARTITIONS_CONCURRENCY: values.concurrency,
      CASSANDRA_CONTACT_POINTS: engines.contactPoints.join(','),
      CASSANDRA_LOCAL_DC: engines.localDc,
      CASSANDRA_KEYSPACE: keyspace,
    };
    if (!BACKLOG) {
      ingester = await startIngester(ingesterEnv, port);
      log('ingester ready (migrations applied); producing');
    }
    const store = new CassandraActivityStore(cassandra, { keyspace, ttlSeconds: 86_400 });

    const sink = new KafkaActivitySink({
      brokers: engines.brokers,
      clientId: `bench-sink-${run}`,
      topic,
      maxBatch: Number(values['max-batch']),
      lingerMs: Number(values.linger),
    });
    await sink.connect();
    const cpu0 = {
      bench: process.cpuUsage(),
      ingester: cpuSeconds(ingester?.child.pid),
      kafka: cpuSeconds(enginePid('kafka')),
      cassandra: cpuSeconds(enginePid('cassandra')),
    };
    let startedAt = Date.now();
    const t0 = performance.now();
    await Promise.all(activities.map((a) => sink.publish(a)));
    const produceS = (performance.now() - t0) / 1000;
    if (BACKLOG) {
      log(`produced in ${produceS.toFixed(2)} s; starting the ingester on the backlog`);
      ingester = await startIngester(ingesterEnv, port);
      // Measured from when it is ready: start-up (migrations, joining the group) is not ingest.
      startedAt = Date.now();
      cpu0.bench = process.cpuUsage();
      cpu0.ingester = cpuSeconds(ingester.child.pid);
      cpu0.kafka = cpuSeconds(enginePid('kafka'));
      cpu0.cassandra = cpuSeconds(enginePid('cassandra'));
    } else log(`produced in ${produceS.toFixed(2)} s; waiting for the ingester`);
    await waitForLag0(kafka, groupId, 600_000);
    if (!ingester) throw new Error('no ingester');
    const cpu1 = {
      bench: process.cpuUsage(cpu0.bench),
      ingester: cpuSeconds(ingester.child.pid),
      kafka: cpuSeconds(enginePid('kafka')),
      cassandra: cpuSeconds(enginePid('cassandra')),
    };
    await sink.close();
    ingester.child.kill('SIGTERM');
    const stats = await ingester.stats;
    const exitCode = await ingester.exited;
    ingester = null;
    if (stats.written !== N) throw new Error(`ingester wrote ${stats.written} of ${N}`);
    const endToEndS = (stats.lastWriteAt! - startedAt) / 1000;
    const writingS = (stats.lastWriteAt! - stats.firstWriteAt!) / 1000;

    log('reading back from Cassandra');
    const stored = await exportRate(store, 10_000);
    if (stored.rows !== N) throw new Error(`Cassandra holds ${stored.rows} of ${N}`);
    const c1000 = await exportRate(store, 1_000);
    const c10000 = await exportRate(store, 10_000);

    log('loading the same rows into SQLite');
    const db = openSqlite(path.join(sqliteDir, 'bench.db'));
    const sqlite = new SqliteActivityStore(db);
    for (let i = 0; i < N; i += 1000) await sqlite.record(activities.slice(i, i + 1000));
    const s1000 = await exportRate(sqlite, 1_000);
    const s10000 = await exportRate(sqlite, 10_000);
    db.close();

    const diff = (a: number | null, b: number | null) => (a !== null && b !== null ? b - a : null);
    const cpu = {
      producer: (cpu1.bench.user + cpu1.bench.system) / 1e6,
      ingester: diff(cpu0.ingester, cpu1.ingester),
      kafka: diff(cpu0.kafka, cpu1.kafka),
      cassandra: diff(cpu0.cassandra, cpu1.cassandra),
    };
    const result = {
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model ?? 'unknown',
        memGiB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        load: os.loadavg().map((l) => l.toFixed(2)),
      },
      n: N,
      backlog: BACKLOG,
      orgs: ORGS.length,
      partitions: PARTITIONS,
      bytesPerActivity: Math.round(bytes / N),
      produce: {
        seconds: produceS,
        rate: N / produceS,
        batches: sink.stats.batches,
        encodeMs: sink.stats.encodeMs,
        sendMs: sink.stats.sendMs,
      },
      ingest: {
        endToEndSeconds: endToEndS,
        endToEndRate: N / endToEndS,
        writingSeconds: writingS,
        writeRate: N / writingS,
        exitCode,
        ...stats,
      },
      export: {
        cassandra1000: c1000.rate,
        cassandra10000: c10000.rate,
        sqlite1000: s1000.rate,
        sqlite10000: s10000.rate,
      },
      cpuSeconds: cpu,
    };
    printReport(result);
    if (values.json) writeFileSync(values.json, JSON.stringify(result, null, 2));
  } finally {
    if (ingester) {
      ingester.child.kill('SIGKILL');
      await ingester.exited;
    }
    await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    await cassandra.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await cassandra.shutdown().catch(() => undefined);
    rmSync(sqliteDir, { recursive: true, force: true });
    if (lease) releaseEngines();
  }
}

type Result = {
  machine: { cpus: number; model: string; memGiB: number; node: string; load: string[] };
  n: number;
  backlog: boolean;
  orgs: number;
  partitions: number;
  bytesPerActivity: number;
  produce: { seconds: number; rate: number; batches: number; encodeMs: number; sendMs: number };
  ingest: IngesterStats & {
    endToEndSeconds: number;
    endToEndRate: number;
    writingSeconds: number;
    writeRate: number;
    exitCode: number | null;
  };
  export: Record<'cassandra1000' | 'cassandra10000' | 'sqlite1000' | 'sqlite10000', number>;
  cpuSeconds: Record<'producer' | 'ingester' | 'kafka' | 'cassandra', number | null>;
};

function printReport(r: Result): void {
  const m = r.machine;
  console.log(
    `\nmachine: ${m.cpus} CPUs (${m.model}), ${m.memGiB} GiB, Node ${m.node}; load after run ${m.load.join(' ')}`,
  );
  console.log(
    `${fmt(r.n)} activities (~${r.bytesPerActivity} B of JSON each), ${r.orgs} orgs, topic of ${r.partitions} partitions\n`,
  );
  const rows: [string, string, string, string][] = [
    ['what', 'measured', 'target', 'met'],
    [
      'produce: publish -> acks=all (one KafkaActivitySink)',
      `${fmt(r.produce.rate)} events/s`,
      '',
      '',
    ],
    [
      r.backlog
        ? 'ingest of the backlog: ingester ready -> last row written'
        : 'ingest: first publish -> last row written to Cassandra',
      `${fmt(r.ingest.endToEndRate)} events/s`,
      `>= ${fmt(TARGET_INGEST)} events/s`,
      r.ingest.endToEndRate >= TARGET_INGEST ? 'yes' : 'NO',
    ],
    [
      "ingester's own write rate (first -> last write)",
      `${fmt(r.ingest.writeRate)} events/s`,
      `>= ${fmt(TARGET_INGEST)} events/s`,
      r.ingest.writeRate >= TARGET_INGEST ? 'yes' : 'NO',
    ],
  ];
  for (const [key, label] of [
    ['cassandra1000', 'export from Cassandra, list limit 1000'],
    ['cassandra10000', 'export from Cassandra, list limit 10000'],
    ['sqlite1000', 'export from SQLite (embedded), limit 1000'],
    ['sqlite10000', 'export from SQLite (embedded), limit 10000'],
  ] as const) {
    const rate = r.export[key];
    rows.push([
      label,
      `${fmt(rate)} rows/s`,
      `>= ${fmt(TARGET_EXPORT)} rows/s`,
      rate >= TARGET_EXPORT ? 'yes' : 'NO',
    ]);
  }
  printTable(rows);

  const i = r.ingest;
  const per1k = (ms: number) => `${((ms / r.n) * 1000).toFixed(1)} ms`;
  console.log(
    '\nwhere the time goes (sums over concurrent partitions, so they can exceed wall time):',
  );
  printTable([
    ['step', 'total', 'per 1,000 events'],
    [
      'producer: validate (zod) + JSON.stringify',
      `${(r.produce.encodeMs / 1000).toFixed(2)} s`,
      per1k(r.produce.encodeMs),
    ],
    [
      `producer: sendBatch, ${r.produce.batches} batches`,
      `${(r.produce.sendMs / 1000).toFixed(2)} s`,
      per1k(r.produce.sendMs),
    ],
    [
      'ingester: JSON.parse + ActivityRecord.safeParse',
      `${(i.parseMs / 1000).toFixed(2)} s`,
      per1k(i.parseMs),
    ],
    [
      `ingester: store.record (Cassandra), ${i.chunks} chunks`,
      `${(i.writeMs / 1000).toFixed(2)} s`,
      per1k(i.writeMs),
    ],
    ['ingester: offset commits', `${(i.commitMs / 1000).toFixed(2)} s`, per1k(i.commitMs)],
    ['ingester: dead-letter sends', `${(i.dlqMs / 1000).toFixed(2)} s`, per1k(i.dlqMs)],
  ]);
  const c = r.cpuSeconds;
  const s = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(1)} s`);
  console.log(
    `\nCPU used from ${r.backlog ? 'ingester ready' : 'first publish'} to last commit (${i.endToEndSeconds.toFixed(1)} s wall, ${r.machine.cpus} CPUs = ${(i.endToEndSeconds * r.machine.cpus).toFixed(1)} CPU-s available):` +
      ` ${r.backlog ? 'this process (polling the lag)' : 'producer'} ${s(c.producer)}, ingester ${s(c.ingester)}, Kafka ${s(c.kafka)}, Cassandra ${s(c.cassandra)}`,
  );
  console.log(
    `ingester: ${i.batches} batches, ${i.retries} retries, exit code ${i.exitCode} after SIGTERM`,
  );
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((v, c) => v.padEnd(widths[c]!)).join(' | ')} |`;
  console.log(line(rows[0]!));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of rows.slice(1)) console.log(line(r));
}

await main();
