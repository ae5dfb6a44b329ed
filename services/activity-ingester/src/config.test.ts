import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

const required = { KAFKA_BROKERS: '127.0.0.1:9092', CASSANDRA_CONTACT_POINTS: '127.0.0.1:9042' };

describe('ingester config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig(required);
    expect(c).toMatchObject({
      port: 8090,
      kafka: {
        brokers: ['127.0.0.1:9092'],
        topic: 'guard.activity.v1',
        dlqTopic: 'guard.activity.v1.dlq',
        groupId: 'guard-activity-ingester',
        createTopics: true,
      },
      cassandra: {
        contactPoints: ['127.0.0.1:9042'],
        localDataCenter: 'datacenter1',
        keyspace: 'guard',
      },
      retentionSeconds: 30 * 86_400,
      metrics: true,
    });
  });

  it('reads lists, the topic (its DLQ follows) and the retention', () => {
    const c = loadConfig({
      ...required,
      KAFKA_BROKERS: ' a:9092, b:9092 ,',
      KAFKA_ACTIVITY_TOPIC: 'acme.activity.v1',
      GUARD_ACTIVITY_RETENTION_DAYS: '7',
      PORT: '0',
      GUARD_METRICS: 'false',
    });
    expect(c.metrics).toBe(false);
    expect(c.kafka.brokers).toEqual(['a:9092', 'b:9092']);
    expect(c.kafka.dlqTopic).toBe('acme.activity.v1.dlq');
    expect(c.retentionSeconds).toBe(7 * 86_400);
    expect(c.port).toBe(0);
  });

  it('lists every bad variable at once', () => {
    expect(() =>
      loadConfig({
        KAFKA_BROKERS: ' , ',
        CASSANDRA_KEYSPACE: 'Bad-Name',
        GUARD_ACTIVITY_RETENTION_DAYS: '8000',
      }),
    ).toThrow(
      /KAFKA_BROKERS[\s\S]*CASSANDRA_CONTACT_POINTS[\s\S]*CASSANDRA_KEYSPACE[\s\S]*GUARD_ACTIVITY_RETENTION_DAYS/,
    );
  });
});
