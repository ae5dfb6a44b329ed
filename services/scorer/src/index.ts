export * from './config.js';
export * from './scorer-process.js';
