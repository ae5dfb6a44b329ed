export * from './sqlite/index.js';
export * from './memory/index.js';
export * from './activity/batching-activity-sink.js';
export * from './upstream/http-upstream.js';
export * from './jobs/in-process-job-runner.js';
