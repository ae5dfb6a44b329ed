import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'cassandra-driver';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activity, ActivityStore } from '@guard/domain';
import { createLogger } from '@guard/platform';
import { CassandraActivityStore } from '@guard/adapters/cassandra/cassandra-activity-store';
import { migrateCassandra } from '@guard/adapters/cassandra/migrate';
import { KafkaActivitySink } from '@guard/adapters/kafka/kafka-activity-sink';
import { kafkaLogCreator } from '@guard/adapters/kafka/kafka-log';
import { aRecordedActivity } from '@guard/testing/recorded-activity';
import { startPrivateKafka } from '../../../infra/local/private-kafka.js';
import { ActivityIngester } from './activity-ingester.js';

// Everything named after this file and run: topics, groups, the keyspace (dropped afterwards).
const run = `${process.pid}_${Date.now().toString(36)}`;
const keyspace = `int_ingester_${run}`;
/** Five orgs of one test: tests share the keyspace, so each reads back only its own orgs. */
const orgsOf = (test: string) => ['a', 'b', 'c', 'd', 'e'].map((o) => `org-${o}-${test}`);
const mainTs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.ts');
const logger = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', logContent: false });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Produced {
  orgs: string[];
  ids: Map<string, string[]>;
  total: number;
}

/**
 * Publishes `total` activities spread over `durationMs` (several orgs), as API pods would, and
 * calls `fault` once `faultAt` of them are out, without waiting for it: production goes on while
 * the fault happens. Resolves when every publish has resolved; any rejection fails the test.
 */
async function produceSteadily(
  sink: KafkaActivitySink,
  orgs: string[],
  total: number,
  durationMs: number,
  faultAt: number,
  fault: () => Promise<void>,
): Promise<{ produced: Produced; faultDone: Promise<void> }> {
  const ids = new Map<string, string[]>(orgs.map((o) => [o, []]));
  const publishes: Promise<void>[] = [];
  let faultDone: Promise<void> = Promise.resolve();
  const started = Date.now();
  for (let i = 0; i < total;) {
    const due = Math.min(total, Math.ceil(((Date.now() - started) / durationMs) * total));
    for (; i < due; i++) {
      const org = orgs[i % orgs.length]!;
      const a = aRecordedActivity(org, i);
      ids.get(org)!.push(a.id);
      publishes.push(sink.publish(a));
      if (i === faultAt) faultDone = fault();
    }
    await sleep(10);
  }
  await Promise.all(publishes);
  return { produced: { orgs, ids, total }, faultDone };
}

/** Every id of each org, read back through `list` pages. */
async function readAll(
  store: ActivityStore,
  orgs: string[],
  limit: number,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const org of orgs) {
    const ids: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.list(org, { after, limit });
      ids.push(...page.items.map((a: Activity) => a.id));
      if (!page.has_more || page.items.length === 0) break;
      after = page.items[page.items.length - 1]!.id;
    }
    out.set(org, ids);
  }
  return out;
}

const count = (m: Map<string, string[]>) => [...m.values()].reduce((n, ids) => n + ids.length, 0);

async function waitUntilStored(store: ActivityStore, produced: Produced, timeoutMs: number) {
  const { orgs, total } = produced;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const stored = await readAll(store, orgs, 10_000);
    if (count(stored) >= total || Date.now() > end) return stored;
    await sleep(500);
  }
}

/** Each produced id stored exactly once, read back in pages of 1,000. */
async function expectExactlyOnce(store: ActivityStore, produced: Produced, timeoutMs = 90_000) {
  await waitUntilStored(store, produced, timeoutMs);
  const stored = await readAll(store, produced.orgs, 1_000);
  for (const org of produced.orgs) {
    const got = stored.get(org)!;
    expect(new Set(got).size, `duplicates in ${org}`).toBe(got.length);
    // Pages come oldest first; ids are time-ordered, so sorted produced ids are the same list.
    expect(got, `ids of ${org}`).toEqual([...produced.ids.get(org)!].sort());
  }
  expect(count(stored)).toBe(produced.total);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('activity ingester (real Kafka and Cassandra)', () => {
  let cassandra: Client;
  let store: CassandraActivityStore;

  beforeAll(async () => {
    const { cassandraContactPoints, cassandraLocalDc } = inject('engines');
    cassandra = new Client({
      contactPoints: cassandraContactPoints,
      localDataCenter: cassandraLocalDc,
    });
    await cassandra.connect();
    await migrateCassandra(cassandra, { keyspace });
    store = new CassandraActivityStore(cassandra, { keyspace, ttlSeconds: 86_400 });
  });

  afterAll(async () => {
    await cassandra?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await cassandra?.shutdown();
  });

  it('loses nothing and duplicates nothing while the Kafka broker restarts mid-stream', async () => {
    // A broker of its own: the shared one must not restart under other test files.
    const broker = await startPrivateKafka();
    const topic = `int.ingest.${run}.restart.v1`;
    const kafka = new Kafka({
      clientId: `int-${run}`,
      brokers: broker.brokers,
      logCreator: kafkaLogCreator(logger),
    });
    const ingester = new ActivityIngester({
      kafka,
      store,
      logger,
      topic,
      groupId: `int-${run}-restart`,
      sessionTimeoutMs: 10_000,
    });
    const sink = new KafkaActivitySink({
      brokers: broker.brokers,
      clientId: `int-sink-${run}`,
      topic,
    });
    try {
      await ingester.ensureTopics(6, 1);
      await ingester.start();
      const orgs = orgsOf('restart');
      let storedAtFault = -1;
      const { produced, faultDone } = await produceSteadily(
        sink,
        orgs,
        5_000,
        10_000,
        1_500,
        async () => {
          storedAtFault = count(await readAll(store, orgs, 10_000));
          await broker.stop('SIGTERM');
          await sleep(1_000);
          await broker.start();
        },
      );
      await faultDone;
      // The restart happened while activities were flowing both in and out.
      expect(storedAtFault).toBeGreaterThan(0);
      expect(storedAtFault).toBeLessThan(5_000);
      expect(sink.stats.retries).toBeGreaterThan(0);
      expect(sink.stats.failed).toBe(0);
      await expectExactlyOnce(store, produced);
      expect(ingester.stats.poisoned).toBe(0);
    } finally {
      await sink.close().catch(() => undefined);
      await ingester.stop().catch(() => undefined);
      await broker.close();
    }
  }, 240_000);

  it('loses nothing and duplicates nothing when the ingester process is SIGKILLed and started again', async () => {
    const brokers = inject('engines').kafkaBrokers;
    const { cassandraContactPoints, cassandraLocalDc } = inject('engines');
    const topic = `int.ingest.${run}.kill.v1`;
    const port = await freePort();
    const env = {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      GUARD_LOG_LEVEL: 'warn',
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_ACTIVITY_TOPIC: topic,
      KAFKA_CONSUMER_GROUP: `int-${run}-kill`,
      KAFKA_ACTIVITY_PARTITIONS: '6',
      KAFKA_SESSION_TIMEOUT_MS: '10000',
      CASSANDRA_CONTACT_POINTS: cassandraContactPoints.join(','),
      CASSANDRA_LOCAL_DC: cassandraLocalDc,
      CASSANDRA_KEYSPACE: keyspace,
      GUARD_ACTIVITY_RETENTION_DAYS: '1',
    };
    const output: string[] = [];
    const children: ChildProcess[] = [];
    const startChild = async () => {
      const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', mainTs], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      child.stdout!.on('data', (d: Buffer) => output.push(d.toString()));
      child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
      const end = Date.now() + 90_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`ingester exited:\n${output.join('')}`);
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
          .then((r) => r.status === 200)
          .catch(() => false);
        if (ready) return child;
        if (Date.now() > end) throw new Error(`ingester not ready in 90 s:\n${output.join('')}`);
        await sleep(200);
      }
    };
    const exitOf = (child: ChildProcess) =>
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve({ code: child.exitCode, signal: child.signalCode });
        } else child.once('exit', (code, signal) => resolve({ code, signal }));
      });

    const sink = new KafkaActivitySink({ brokers, clientId: `int-sink-kill-${run}`, topic });
    try {
      const first = await startChild();
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const orgs = orgsOf('kill');
      let storedAtKill = -1;
      const { produced, faultDone } = await produceSteadily(
        sink,
        orgs,
        5_000,
        10_000,
        1_500,
        async () => {
          storedAtKill = count(await readAll(store, orgs, 10_000));
          first.kill('SIGKILL');
          expect((await exitOf(first)).signal).toBe('SIGKILL');
          await sleep(1_000);
          await startChild();
        },
      );
      await faultDone;
      expect(storedAtKill).toBeGreaterThan(0);
      expect(storedAtKill).toBeLessThan(5_000);
      await expectExactlyOnce(store, produced);

      // A graceful stop: finishes, commits, leaves the group, exits 0.
      const second = children[children.length - 1]!;
      second.kill('SIGTERM');
      expect(await exitOf(second)).toEqual({ code: 0, signal: null });
    } finally {
      await sink.close().catch(() => undefined);
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    }
  }, 240_000);

  it('dead-letters poison messages with their reason and origin, and goes on past them', async () => {
    const brokers = inject('engines').kafkaBrokers;
    const topic = `int.ingest.${run}.poison.v1`;
    const kafka = new Kafka({ clientId: `int-${run}`, brokers, logLevel: logLevel.NOTHING });
    const ingester = new ActivityIngester({
      kafka,
      store,
      logger,
      topic,
      groupId: `int-${run}-poison`,
    });
    await ingester.ensureTopics(1, 1);
    const producer = kafka.producer();
    const dlq = kafka.consumer({ groupId: `int-${run}-dlq`, maxWaitTimeInMs: 100 });
    const dead: KafkaMessage[] = [];
    try {
      await producer.connect();
      await dlq.connect();
      await dlq.subscribe({ topic: ingester.dlqTopic, fromBeginning: true });
      await dlq.run({ eachMessage: async ({ message }) => void dead.push(message) });
      await ingester.start();

      const before = aRecordedActivity('org-a', 1);
      const after = aRecordedActivity('org-a', 2);
      const v1 = { 'schema-version': '1', 'content-type': 'application/json' };
      const sent = await producer.send({
        topic,
        acks: -1,
        messages: [
          { key: 'org-a', value: JSON.stringify(before), headers: v1 },
          { key: 'org-a', value: '{"id": "truncated', headers: v1 },
          { key: 'org-a', value: JSON.stringify(before), headers: { 'schema-version': '2' } },
          { key: 'org-a', value: JSON.stringify({ ...after, blocked: 'yes' }), headers: v1 },
          { key: 'org-a', value: JSON.stringify(after), headers: v1 },
        ],
      });
      const base = BigInt(sent[0]!.baseOffset!);

      const end = Date.now() + 30_000;
      while ((dead.length < 3 || !(await store.get('org-a', after.id))) && Date.now() < end) {
        await sleep(100);
      }
      expect(await store.get('org-a', before.id)).toEqual(before);
      expect(await store.get('org-a', after.id)).toEqual(after);
      const h = (m: KafkaMessage, name: string) => m.headers?.[name]?.toString();
      expect(
        dead.map((m) => [h(m, 'dlq-reason'), h(m, 'dlq-original-offset'), m.key?.toString()]),
      ).toEqual([
        ['invalid-json', String(base + 1n), 'org-a'],
        ['unsupported-schema-version', String(base + 2n), 'org-a'],
        ['invalid-activity', String(base + 3n), 'org-a'],
      ]);
      for (const m of dead) {
        expect(h(m, 'dlq-original-topic')).toBe(topic);
        expect(h(m, 'dlq-original-partition')).toBe('0');
        expect(h(m, 'dlq-detail')).toBeTruthy();
      }
      expect(h(dead[2]!, 'dlq-detail')).toMatch(/^blocked: /);
      expect(dead[1]!.value?.toString()).toBe(JSON.stringify(before));
      expect(ingester.stats.poisoned).toBe(3);
    } finally {
      await ingester.stop().catch(() => undefined);
      await dlq.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
    }
  });
});
