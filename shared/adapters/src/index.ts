export * from './sqlite/index.js';
export * from './memory/index.js';
