export * from './detectors.js';
export * from './engine-types.js';
