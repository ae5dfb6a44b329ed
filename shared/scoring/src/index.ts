export * from './detectors.js';
