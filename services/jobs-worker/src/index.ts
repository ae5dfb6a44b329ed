export * from './config.js';
export * from './jobs-worker-process.js';
export * from './build-stores.js';
