/** Score requests for tests: one user text, no rules, default thresholds, content moderation. */
import type { ScoreRequest } from '../engine-types.js';

export const TEST_THRESHOLDS = {
  pre_violation_threshold: 0.5,
  pre_jb_threshold: 0.3,
  post_violation_threshold: 0.5,
  post_violation_jb_threshold: 0.3,
} as const;

export function userTextRequest(
  text: string,
  scanners_config: Record<string, unknown> = {},
): ScoreRequest {
  return {
    messages: [{ role: 'user', content: text }],
    rules: [],
    thresholds: TEST_THRESHOLDS,
    mode: 'content_moderation',
    scanners_config,
    reasoning_mode: 'off',
  };
}
