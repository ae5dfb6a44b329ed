export * from './api-keys.js';
