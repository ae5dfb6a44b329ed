export * from './sqlite-database.js';
export * from './sqlite-org-store.js';
export * from './sqlite-api-key-store.js';
export * from './sqlite-policy-store.js';
export * from './sqlite-activity-store.js';
export * from './sqlite-job-store.js';
