import { describe, expect, it } from 'vitest';
import { loadConfig, loadWorkerSettings } from './config.js';

const required = { TEMPORAL_ADDRESS: 'temporal:7233', CASSANDRA_CONTACT_POINTS: 'cass-1:9042' };

describe('jobs-worker config', () => {
  it('has the documented defaults', () => {
    expect(loadConfig(required)).toEqual({
      port: 8092,
      host: '0.0.0.0',
      logLevel: 'info',
      temporal: { address: 'temporal:7233', namespace: 'default', taskQueue: 'guard-jobs' },
      maxActivities: 8,
      shutdownGraceMs: 10_000,
      cassandra: {
        contactPoints: ['cass-1:9042'],
        localDataCenter: 'datacenter1',
        keyspace: 'guard',
      },
      activityRetentionDays: 30,
      metrics: true,
    });
  });

  it('reads every setting', () => {
    const c = loadConfig({
      ...required,
      PORT: '0',
      HOST: '127.0.0.1',
      GUARD_LOG_LEVEL: 'warn',
      TEMPORAL_NAMESPACE: 'guard-prod',
      GUARD_JOBS_TASK_QUEUE: 'acme-jobs',
      GUARD_JOBS_MAX_ACTIVITIES: '2',
      GUARD_JOBS_SHUTDOWN_GRACE_MS: '500',
      CASSANDRA_KEYSPACE: 'acme',
      GUARD_ACTIVITY_RETENTION_DAYS: '7',
      GUARD_METRICS: 'false',
    });
    expect(c).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      logLevel: 'warn',
      temporal: { namespace: 'guard-prod', taskQueue: 'acme-jobs' },
      maxActivities: 2,
      shutdownGraceMs: 500,
      cassandra: { keyspace: 'acme' },
      activityRetentionDays: 7,
      metrics: false,
    });
  });

  it('names every missing or bad variable at once', () => {
    expect(() => loadConfig({ GUARD_JOBS_MAX_ACTIVITIES: '0' })).toThrow(
      /TEMPORAL_ADDRESS[\s\S]*GUARD_JOBS_MAX_ACTIVITIES[\s\S]*CASSANDRA_CONTACT_POINTS/,
    );
  });

  it('without stores, needs no Cassandra settings', () => {
    expect(loadWorkerSettings({ TEMPORAL_ADDRESS: 'temporal:7233' }).temporal.taskQueue).toBe(
      'guard-jobs',
    );
  });
});
