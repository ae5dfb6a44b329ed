export * from './builders.js';
export * from './store-contracts.js';
