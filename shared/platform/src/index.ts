export * from './errors.js';
export * from './ids.js';
export * from './logger.js';
export * from './config.js';
export * from './lifecycle.js';
export * from './validation.js';
export * from './opaque.js';
