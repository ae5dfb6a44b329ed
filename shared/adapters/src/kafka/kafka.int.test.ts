import {
  Kafka,
  logLevel,
  type Admin,
  type Consumer,
  type EachMessagePayload,
  type Producer,
} from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// Topic and group names are unique to this file and run, so runs can share one broker.
const run = `${process.pid}-${Date.now().toString(36)}`;
const topic = `int.kafka.${run}.activity.v1`;

describe('Kafka (real broker)', () => {
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let consumer: Consumer;

  beforeAll(async () => {
    // kafkajs logs retried, transient broker states (a group coordinator still loading on a
    // fresh broker) at ERROR; real failures reject the calls below, with the broker's error.
    kafka = new Kafka({
      clientId: `int-${run}`,
      brokers: inject('engines').kafkaBrokers,
      logLevel: logLevel.NOTHING,
    });
    admin = kafka.admin();
    await admin.connect();
    // Created up front: auto-creation on first metadata request races the first produce.
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 2, replicationFactor: 1 }],
    });
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    consumer = kafka.consumer({ groupId: `int-${run}` });
    await consumer.connect();
  });

  afterAll(async () => {
    await consumer?.disconnect();
    await producer?.disconnect();
    await admin?.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin?.disconnect();
  });

  it('delivers produced events, with key and headers, to a consumer group', async () => {
    const events = ['org-a', 'org-b', 'org-a'].map((org, i) => ({
      key: org,
      value: JSON.stringify({ type: 'activity.recorded', id: `evt-${i}`, orgId: org }),
      headers: { traceparent: `00-${'0'.repeat(31)}${i + 1}-${'0'.repeat(15)}1-01` },
    }));
    const received: EachMessagePayload[] = [];
    await consumer.subscribe({ topic, fromBeginning: true });
    const allReceived = new Promise<void>((resolve, reject) => {
      setTimeout(
        () => reject(new Error(`consumed ${received.length} of ${events.length} events in 30 s`)),
        30_000,
      ).unref();
      void consumer.run({
        eachMessage: async (payload) => {
          received.push(payload);
          if (received.length === events.length) resolve();
        },
      });
    });

    const acks = await producer.send({ topic, acks: -1, messages: events });
    expect(acks.every((a) => a.errorCode === 0)).toBe(true);

    await allReceived;
    const byId = new Map(
      received.map(({ message, partition }) => {
        const value = JSON.parse(message.value?.toString() ?? '{}') as {
          id: string;
          orgId: string;
        };
        return [
          value.id,
          {
            key: message.key?.toString(),
            orgId: value.orgId,
            partition,
            trace: message.headers?.traceparent?.toString(),
          },
        ];
      }),
    );
    expect([...byId.keys()].sort()).toEqual(['evt-0', 'evt-1', 'evt-2']);
    for (const [id, got] of byId) {
      expect(got.key).toBe(got.orgId);
      expect(got.trace).toBe(events[Number(id.slice(4))]?.headers.traceparent);
    }
    // Same key, same partition: per-org ordering holds.
    expect(byId.get('evt-0')?.partition).toBe(byId.get('evt-2')?.partition);
  });
});
