// Deterministic shell over the smoke activities: runs inside Temporal's workflow sandbox, so it
// imports no Node built-ins and only the activities' type.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { SmokeActivities } from './smoke.activities.js';

const { describePolicy } = proxyActivities<SmokeActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 2, initialInterval: '50 milliseconds' },
});

export interface SmokeResult {
  workflowId: string;
  described: string[];
}

export async function describePoliciesWorkflow(policyIds: string[]): Promise<SmokeResult> {
  const described: string[] = [];
  for (const id of policyIds) described.push(await describePolicy(id));
  return { workflowId: workflowInfo().workflowId, described };
}
