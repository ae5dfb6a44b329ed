import { describe, expect, it } from 'vitest';
import { SCORE_CONTRACT_VERSION, type ScoreRequest } from '@guard/domain';
import { parseScoreEnvelope, ScoreReplyEnvelope, ScoreRequestEnvelope } from './score-envelope.js';

const request: ScoreRequest = {
  messages: [{ role: 'user', content: 'hello' }],
  rules: [{ name: 'no pii', description: 'Do not share personal data', mode: 'block' }],
  thresholds: {
    pre_violation_threshold: 0.5,
    pre_jb_threshold: 0.5,
    post_violation_threshold: 0.5,
    post_violation_jb_threshold: 0.5,
  },
  mode: 'content_moderation',
  scanners_config: {},
  reasoning_mode: 'off',
};
const envelope = {
  v: SCORE_CONTRACT_VERSION,
  id: 'req-1',
  reply_to: 'guard:score:reply:pod-a',
  deadline_ms: 1_800_000_000_000,
  trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  request,
};

describe('score request envelope', () => {
  it('reads a current envelope, trace context included', () => {
    expect(parseScoreEnvelope(JSON.stringify(envelope))).toEqual({ kind: 'ok', envelope });
    // The scope of what the scorer remembers travels with the request.
    const scoped = { ...envelope, request: { ...request, cache_scope: 'org-a' } };
    expect(parseScoreEnvelope(JSON.stringify(scoped))).toEqual({ kind: 'ok', envelope: scoped });
    const { trace: _trace, ...untraced } = envelope;
    expect(ScoreRequestEnvelope.parse(untraced)).toEqual(untraced);
  });

  it('refuses a trace that is not a map of strings', () => {
    expect(ScoreRequestEnvelope.safeParse({ ...envelope, trace: { traceparent: 1 } }).success).toBe(
      false,
    );
  });

  it('names another version as unsupported, keeping the address to answer', () => {
    const parsed = parseScoreEnvelope(
      JSON.stringify({ ...envelope, v: SCORE_CONTRACT_VERSION + 1, request: { anything: true } }),
    );
    expect(parsed).toMatchObject({
      kind: 'unsupported',
      header: { id: 'req-1', reply_to: 'guard:score:reply:pod-a', v: SCORE_CONTRACT_VERSION + 1 },
    });
    expect(parsed.kind !== 'ok' && parsed.message).toMatch(/version 2 is not supported/);
  });

  it('names a bad body as invalid, with the field at fault', () => {
    const parsed = parseScoreEnvelope(
      JSON.stringify({ ...envelope, request: { ...request, reasoning_mode: 'deep' } }),
    );
    expect(parsed).toMatchObject({ kind: 'invalid', header: { id: 'req-1' } });
    expect(parsed.kind !== 'ok' && parsed.message).toMatch(/request\.reasoning_mode/);
  });

  it('cannot answer what has no header: not JSON, no reply address, a negative deadline', () => {
    expect(parseScoreEnvelope('{"v":1,')).toMatchObject({ kind: 'unreadable' });
    expect(parseScoreEnvelope(undefined)).toMatchObject({ kind: 'unreadable' });
    const { reply_to: _r, ...noReply } = envelope;
    expect(parseScoreEnvelope(JSON.stringify(noReply))).toMatchObject({
      kind: 'unreadable',
      message: expect.stringMatching(/reply_to/),
    });
    expect(parseScoreEnvelope(JSON.stringify({ ...envelope, deadline_ms: -1 }))).toMatchObject({
      kind: 'unreadable',
    });
  });
});

describe('score reply envelope', () => {
  it('is a result or an error with a known code, never both', () => {
    expect(
      ScoreReplyEnvelope.safeParse({
        v: 1,
        id: 'a',
        ok: false,
        error: { code: 'deadline_exceeded', message: 'late' },
      }).success,
    ).toBe(true);
    expect(
      ScoreReplyEnvelope.safeParse({
        v: 1,
        id: 'a',
        ok: false,
        error: { code: 'oops', message: '' },
      }).success,
    ).toBe(false);
    expect(ScoreReplyEnvelope.safeParse({ v: 1, id: 'a', ok: true }).success).toBe(false);
    expect(
      ScoreReplyEnvelope.safeParse({ v: 1, id: 'a', ok: true, result: { violation: 0 } }).success,
    ).toBe(false);
  });
});
