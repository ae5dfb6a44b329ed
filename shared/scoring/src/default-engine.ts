/**
 * The engine with the learned detectors from `ml/` (weights under shared/scoring/models). What
 * the monitor endpoint and the scorer pods use unless they bring their own detectors.
 */
import {
  createLocalEngine,
  type LocalEngine,
  type LocalEngineOptions,
} from './engine/local-engine.js';
import { createMlDetectors } from './ml/index.js';

export interface DefaultEngineOptions extends Omit<LocalEngineOptions, 'detectors'> {
  /** Load weights from here instead of the committed model directory. */
  modelDir?: string;
}

export function createDefaultEngine(options: DefaultEngineOptions = {}): LocalEngine {
  const { modelDir, ...rest } = options;
  return createLocalEngine({ ...rest, detectors: createMlDetectors(modelDir ? { modelDir } : {}) });
}
