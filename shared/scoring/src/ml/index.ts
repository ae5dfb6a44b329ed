export { createMlDetectors, MlDetectors, type MlDetectorsOptions } from './ml-detectors.js';
export { MlModel, defaultModelDir, type ModelManifest, type SegmentScores } from './ml-model.js';
export { segmentText, type TextSegment } from './features.js';
