// Activities of the job workflows (jobs.workflow.ts): the domain's job activities over the
// worker's stores, heartbeating to Temporal after each unit of work, so that an attempt on a
// worker that died is given up after the heartbeat timeout rather than the start-to-close one.
import { heartbeat } from '@temporalio/activity';
import { createJobActivities, type JobActivities, type JobActivityDeps } from '@guard/domain';

export type TemporalJobActivityDeps = Omit<JobActivityDeps, 'heartbeat'>;

export function createTemporalJobActivities(deps: TemporalJobActivityDeps): JobActivities {
  // Progress lives in the job store (checkpoints, derived ids), not in heartbeat details: a
  // retried attempt reads where it got to from there, as a resumed in-process job does.
  return createJobActivities({ ...deps, heartbeat: () => heartbeat() });
}
