export * from './common.js';
export * from './policies.js';
export * from './openapi.js';
