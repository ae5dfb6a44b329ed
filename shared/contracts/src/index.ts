export * from './common.js';
export * from './policies.js';
export * from './monitor.js';
export * from './orgs.js';
export * from './openapi.js';
export * from './completions.js';
export * from './activity.js';
export * from './jobs.js';
