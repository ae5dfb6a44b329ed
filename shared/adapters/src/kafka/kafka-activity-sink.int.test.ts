import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:net';
import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import { Kafka, logLevel, type Admin, type Consumer, type KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ActivityRecord } from '@guard/contracts';
import { aRecordedActivity } from '@guard/testing/recorded-activity';
import { KafkaActivitySink } from './kafka-activity-sink.js';

const run = `${process.pid}-${Date.now().toString(36)}`;
const topic = `int.sink.${run}.activity.v1`;

/**
 * What an OpenTelemetry SDK registers in a service: a context manager over AsyncLocalStorage, so
 * that `context.with` makes a span's context active for the code it runs.
 */
class AlsContextManager implements ContextManager {
  private readonly als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.als.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.als.disable();
    return this;
  }
}

describe('KafkaActivitySink (real broker)', () => {
  let kafka: Kafka;
  let admin: Admin;
  let consumer: Consumer;
  let sink: KafkaActivitySink;
  const received = new Map<string, KafkaMessage & { partition: number }>();

  beforeAll(async () => {
    const brokers = inject('engines').kafkaBrokers;
    kafka = new Kafka({ clientId: `int-${run}`, brokers, logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
    });
    consumer = kafka.consumer({ groupId: `int-${run}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message, partition }) => {
        const id = (JSON.parse(message.value!.toString()) as { id: string }).id;
        received.set(id, { ...message, partition });
      },
    });
    sink = new KafkaActivitySink({ brokers, clientId: `int-sink-${run}`, topic, maxBatch: 500 });
    context.setGlobalContextManager(new AlsContextManager());
  });

  afterAll(async () => {
    context.disable();
    await sink?.close();
    await consumer?.disconnect();
    await admin?.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin?.disconnect();
  });

  async function waitFor(ids: string[]): Promise<void> {
    const end = Date.now() + 30_000;
    while (ids.some((id) => !received.has(id))) {
      if (Date.now() > end) {
        throw new Error(`${ids.filter((id) => !received.has(id)).length} not consumed in 30 s`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('publishes the validated record keyed by org, with schema version, content type and trace context', async () => {
    const plain = aRecordedActivity('org-a', 1);
    const traced = aRecordedActivity('org-b', 2);
    const span = {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
      traceState: createTraceState('vendor=abc'),
    };
    await Promise.all([
      sink.publish(plain),
      context.with(trace.setSpanContext(ROOT_CONTEXT, span), () => sink.publish(traced)),
    ]);
    await waitFor([plain.id, traced.id]);

    const a = received.get(plain.id)!;
    expect(a.key?.toString()).toBe('org-a');
    expect(ActivityRecord.parse(JSON.parse(a.value!.toString()))).toEqual(plain);
    expect(a.headers?.['schema-version']?.toString()).toBe('1');
    expect(a.headers?.['content-type']?.toString()).toBe('application/json');
    expect(a.headers?.traceparent).toBeUndefined();

    const b = received.get(traced.id)!;
    expect(b.key?.toString()).toBe('org-b');
    expect(b.headers?.traceparent?.toString()).toBe(
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    );
    expect(b.headers?.tracestate?.toString()).toBe('vendor=abc');
  });

  it('sends what is published together as few batches, each publish resolving once acknowledged', async () => {
    const before = sink.stats.batches;
    const activities = Array.from({ length: 2000 }, (_, i) => aRecordedActivity(`org-${i % 4}`, i));
    await Promise.all(activities.map((a) => sink.publish(a)));
    // 2,000 published in one tick, at most 500 a batch.
    expect(sink.stats.batches - before).toBe(4);
    await waitFor(activities.map((a) => a.id));
    // One org, one partition: its activities keep their order.
    const partitionOf = new Map<string, Set<number>>();
    for (const a of activities) {
      const set = partitionOf.get(a.org_id) ?? new Set();
      set.add(received.get(a.id)!.partition);
      partitionOf.set(a.org_id, set);
    }
    for (const set of partitionOf.values()) expect(set.size).toBe(1);
  });

  it('refuses an activity the schema refuses, without sending it', async () => {
    const bad = { ...aRecordedActivity('org-a'), id: 'not-hex' };
    await expect(sink.publish(bad)).rejects.toThrow(/does not match ActivityRecord: id/);
  });

  it('flush waits for what is pending', async () => {
    const a = aRecordedActivity('org-c');
    let settled = false;
    void sink.publish(a).then(() => (settled = true));
    await sink.flush();
    expect(settled).toBe(true);
  });

  it('rejects publishes whose batch cannot be delivered within the delivery timeout', async () => {
    // A port nothing listens on: every connection is refused.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const dead = new KafkaActivitySink({
      brokers: [`127.0.0.1:${port}`],
      clientId: `int-dead-${run}`,
      topic,
      deliveryTimeoutMs: 1_500,
    });
    const started = Date.now();
    const results = await Promise.allSettled([
      dead.publish(aRecordedActivity('org-a')),
      dead.publish(aRecordedActivity('org-b')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(dead.stats.failed).toBe(2);
    await dead.close().catch(() => undefined);
  });
});
