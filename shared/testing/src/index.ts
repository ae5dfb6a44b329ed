export * from './builders.js';
export * from './store-contracts.js';
export * from './activity-contract.js';
export * from './seeded.js';
export * from './job-store-contract.js';
