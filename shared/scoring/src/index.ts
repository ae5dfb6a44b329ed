export * from './detectors.js';
export * from './engine-types.js';
export {
  createLocalEngine,
  BUILTIN_JAILBREAK_DESCRIPTION,
  type LocalEngine,
  type LocalEngineOptions,
  type HybridBand,
} from './engine/local-engine.js';
export {
  ENGINE_MODES,
  isEngineMode,
  modeProfile,
  type EngineMode,
  type ModeProfile,
} from './engine/modes.js';
export { countTokens, warmTokenizer } from './engine/token-counter.js';
export {
  ScannersConfigSchema,
  ScannerAction,
  parseScannersConfig,
  PII_TYPES,
  SECRET_TYPES,
  type ScannersConfig,
  type ScannersConfigInput,
  type PiiType,
  type SecretType,
} from './scanners/scanners-config.js';
export { scanPii, redactText, type PiiFinding } from './scanners/pii-scanner.js';
export { scanSecrets, type SecretFinding } from './scanners/secrets-scanner.js';
export {
  compileSafeRegex,
  checkSafeRegex,
  SafeRegexError,
  type SafeRegex,
} from './scanners/safe-regex.js';
export {
  normalizeText,
  type NormalizedText,
  type MutationEvidence,
  type MutationKind,
} from './text/normalize.js';
export { compileRule, type RulePlan } from './router/rule-router.js';
export {
  createJudgeClient,
  type Judge,
  type JudgeConfig,
  type JudgeInput,
  type JudgeOutcome,
  type JudgeVerdict,
} from './judge/judge-client.js';
// Test doubles are not part of the package's API: tests import './testing/stub-detectors.js' by path.
export * from './ml/index.js';
export { createDefaultEngine, type DefaultEngineOptions } from './default-engine.js';
export { errorScoreResult, phaseOf } from './engine/error-result.js';
export {
  createThreadPoolEngine,
  type ThreadPoolEngine,
  type ThreadPoolEngineOptions,
} from './pool/thread-pool-engine.js';
export { withDeadline, deadlineSignal, ScoreDeadlineError } from './pool/deadline-engine.js';
export { createSizeRoutedEngine, requestChars } from './pool/size-routed-engine.js';
