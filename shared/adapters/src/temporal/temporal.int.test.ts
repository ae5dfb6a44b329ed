import { fileURLToPath } from 'node:url';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
} from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from './smoke.activities.js';
import { describePoliciesWorkflow } from './smoke.workflow.js';

// A task queue of its own: no other worker (another file, another run) can take these tasks.
const taskQueue = `int-temporal-${process.pid}-${Date.now().toString(36)}`;
const policies = new Map([
  ['p1', 'No secrets'],
  ['p2', 'No jailbreaks'],
]);
const calls: string[] = [];

describe('Temporal (real dev server)', () => {
  let nativeConnection: NativeConnection;
  let connection: Connection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    // The failure case below is expected: WARN would print its stack trace on every green run.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    const address = inject('engines').temporalAddress;
    nativeConnection = await NativeConnection.connect({ address });
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./smoke.workflow.ts', import.meta.url)),
      logger: new DefaultLogger('WARN'),
    });
    worker = await Worker.create({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundle,
      activities: createActivities({
        async policyName(id) {
          calls.push(id);
          const name = policies.get(id);
          if (!name) throw new Error(`unknown policy ${id}`);
          return name;
        },
      }),
    });
    running = worker.run();
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace: 'default' });
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
    await nativeConnection?.close();
  });

  it('runs a workflow through a worker and returns the activities results to the client', async () => {
    const workflowId = `describe-policies:${taskQueue}:ok`;
    const result = await client.workflow.execute(describePoliciesWorkflow, {
      taskQueue,
      workflowId,
      args: [['p1', 'p2']],
    });
    expect(result).toEqual({ workflowId, described: ['p1: No secrets', 'p2: No jailbreaks'] });

    const description = await client.workflow.getHandle(workflowId).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.taskQueue).toBe(taskQueue);
  });

  it('retries a failing activity as configured, then fails the workflow for the client', async () => {
    const workflowId = `describe-policies:${taskQueue}:unknown`;
    calls.length = 0;
    const failure = await client.workflow
      .execute(describePoliciesWorkflow, { taskQueue, workflowId, args: [['p1', 'missing']] })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const inner: unknown = (failure as WorkflowFailedError).cause?.cause;
    expect(inner instanceof Error ? inner.message : String(inner)).toContain(
      'unknown policy missing',
    );
    // maximumAttempts: 2 in the workflow's retry policy, enforced by the server.
    expect(calls).toEqual(['p1', 'missing', 'missing']);
  });
});
