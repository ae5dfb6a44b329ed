export * from './activity-message.js';
export * from './activity-ingester.js';
export * from './config.js';
export * from './health-server.js';
export * from './ingester-process.js';
