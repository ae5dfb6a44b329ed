export * from './types.js';
export * from './ports.js';
export * from './json-diff.js';
export * from './presets.js';
export * from './caching-org-store.js';
export * from './policies/index.js';
export * from './auth/index.js';
export * from './monitor/index.js';
