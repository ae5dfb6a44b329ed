export * from './memory-org-store.js';
export * from './memory-api-key-store.js';
export * from './memory-policy-store.js';
export * from './memory-activity-store.js';
export * from './memory-job-store.js';
