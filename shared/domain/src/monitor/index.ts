export * from './monitor-input.js';
export * from './resolve-policies.js';
export * from './monitor.js';
export * from './activity-record.js';
