import { describe, expect, it } from 'vitest';
import { errorScoreResult, type ScoreRequest } from '@guard/domain';
import { createSizeRoutedEngine, requestChars } from './size-routed-engine.js';

const request = (content: string, args = ''): ScoreRequest => ({
  messages: [
    {
      role: 'assistant',
      content,
      ...(args ? { tool_calls: [{ name: 'f', arguments: args }] } : {}),
    },
  ],
  rules: [],
  thresholds: {
    pre_violation_threshold: 0.5,
    pre_jb_threshold: 0.3,
    post_violation_threshold: 0.5,
    post_violation_jb_threshold: 0.3,
  },
  mode: 'content_moderation',
  scanners_config: {},
  reasoning_mode: 'off',
});

describe('createSizeRoutedEngine', () => {
  it('scores short requests inline and long ones (text and tool-call arguments counted) on the pool', async () => {
    const seen: string[] = [];
    const engine = (name: string) => ({
      score: async (r: ScoreRequest) => {
        seen.push(name);
        return errorScoreResult(r, name);
      },
    });
    const routed = createSizeRoutedEngine({
      inline: engine('inline'),
      pool: engine('pool'),
      inlineChars: 10,
    });
    await routed.score(request('short'));
    await routed.score(request('exactly10!'));
    await routed.score(request('short', '{"a": 1234}'));
    await routed.score(request('x'.repeat(11)));
    expect(seen).toEqual(['inline', 'inline', 'pool', 'pool']);
    expect(requestChars(request('abc', 'de'))).toBe(5);
  });
});
