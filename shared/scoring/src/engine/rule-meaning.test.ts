import { describe, expect, it } from 'vitest';
import { ruleMeaningScore, type Encoder, type EncoderManifest } from '../encoder/encoder.js';
import { scriptedEncoder as scripted, testManifest } from '../testing/scripted-encoder.js';
import type { RuleScore, ScoreRequest, ScoreResult } from '../engine-types.js';
import { userTextRequest } from '../testing/requests.js';
import { createStubDetectors } from '../testing/stub-detectors.js';
import { MAX_NEW_RULE_READS } from './apply-encoder.js';
import { createLocalEngine } from './local-engine.js';

// Custom rules by meaning, with a scripted encoder: texts that speak of alarms point one way,
// everything else the other. The real model's embeddings: encoder/onnx-encoder.test.ts.
const MANIFEST = testManifest({
  dims: 2,
  route_above: 1.1, // the cascade sends nothing to the jailbreak stage here
  rule_meaning: { at: 0.5, low: 0.3 },
});

const scriptedEncoder = (fail = false) =>
  scripted(
    MANIFEST,
    (i) => ({
      probs: [0.01, 0, 0, 0],
      embedding: Float32Array.from(/alarm|wake/i.test(i.text) ? [1, 0] : [0, 1]),
    }),
    fail,
  );

function engineWith(enc: Encoder, manifest: EncoderManifest = MANIFEST) {
  return createLocalEngine({
    detectors: createStubDetectors({ jailbreak: [], injection: [], harm: {} }),
    encoder: {
      defaultMode: 'cascade',
      manifest,
      encoder: async () => enc,
      countTokens: (t) => t.split(/\s+/u).length,
    },
    warmup: false,
  });
}

const ALARMS = { name: 'no alarms', description: 'Do not set alarms.', mode: 'block' as const };
const WEAPONS = {
  name: 'weapons',
  description: 'No instructions for making weapons or explosives.',
  mode: 'block' as const,
};
const withRules = (text: string, rules: ScoreRequest['rules'], config = {}): ScoreRequest => ({
  ...userTextRequest(text, config),
  rules,
});
const ruleScores = (r: ScoreResult) => (r.scanner_output.rules as RuleScore[]) ?? [];

describe('custom rules by meaning', () => {
  it('scores an unmapped rule by the similarity of its embedding to the text', async () => {
    const enc = scriptedEncoder();
    const engine = engineWith(enc);
    const r = await engine.score(withRules('please wake me at seven', [ALARMS]));
    const [rule] = ruleScores(r);
    expect(rule).toMatchObject({ source: 'meaning', violated: true, confidence: 'low' });
    expect(rule!.score).toBeCloseTo(ruleMeaningScore(MANIFEST.rule_meaning!, 1), 2);
    expect(rule!.evidence.join(' ')).toMatch(/close in meaning to the rule text/);
    expect(r.violated_rules).toEqual([1]);
    expect(enc.seen).toEqual([
      { role: 'prompt', text: 'please wake me at seven' },
      { role: 'prompt', text: 'Do not set alarms.' },
    ]);

    const other = await engine.score(withRules('what is the capital of France', [ALARMS]));
    expect(ruleScores(other)[0]).toMatchObject({ violated: false });
    expect(ruleScores(other)[0]!.score).toBeLessThan(0.3);
    // The rule was embedded once: the second request only sends its text.
    expect(enc.seen).toHaveLength(3);
  });

  it('reuses what the jailbreak stage read of the input instead of reading it again', async () => {
    const enc = scriptedEncoder();
    const routeAll = { ...MANIFEST, route_above: 0 };
    const r = await engineWith(enc, routeAll).score(withRules('please wake me at seven', [ALARMS]));
    expect(r.scanner_output.jailbreak).toMatchObject({ detector: 'encoder' });
    expect(enc.seen).toEqual([
      { role: 'prompt', text: 'please wake me at seven' },
      { role: 'prompt', text: 'Do not set alarms.' },
    ]);
    expect(ruleScores(r)[0]).toMatchObject({ source: 'meaning', violated: true });
  });

  it('reads at most MAX_NEW_RULE_READS new rules per request; the rest on the next ones', async () => {
    const enc = scriptedEncoder();
    const engine = engineWith(enc);
    const many = Array.from({ length: MAX_NEW_RULE_READS + 3 }, (_, i) => ({
      ...ALARMS,
      name: `rule ${i}`,
      description: `Do not set alarm number ${i}.`,
    }));
    const first = await engine.score(withRules('wake me at seven', many));
    expect(enc.seen).toHaveLength(1 + MAX_NEW_RULE_READS);
    expect(first.reasoning).toMatch(/3 custom rule\(s\) not yet read by the encoder/);
    expect(ruleScores(first).filter((r) => r.source === 'meaning')).toHaveLength(
      MAX_NEW_RULE_READS,
    );
    const second = await engine.score(withRules('wake me at seven', many));
    expect(enc.seen).toHaveLength(1 + MAX_NEW_RULE_READS + 1 + 3);
    expect(ruleScores(second).every((r) => r.source === 'meaning')).toBe(true);
  });

  it('the score is 0.5 at the calibrated cosine and 0.3 at the low one', () => {
    expect(ruleMeaningScore({ at: 0.58, low: 0.51 }, 0.58)).toBeCloseTo(0.5, 6);
    expect(ruleMeaningScore({ at: 0.58, low: 0.51 }, 0.51)).toBeCloseTo(0.3, 6);
    expect(ruleMeaningScore({ at: 0.58, low: 0.51 }, 0.9)).toBeGreaterThan(0.9);
  });

  it('rules a detector answers, a policy with the encoder off and a manifest without the point do not ask the encoder', async () => {
    const enc = scriptedEncoder();
    await engineWith(enc).score(withRules('wake me at seven', [WEAPONS]));
    await engineWith(enc).score(withRules('wake me at seven', [ALARMS], { encoder: 'off' }));
    const { rule_meaning: _, ...without } = MANIFEST;
    const r = await engineWith(enc, without).score(withRules('wake me at seven', [ALARMS]));
    expect(enc.seen).toHaveLength(0);
    expect(ruleScores(r)[0]).toMatchObject({ violated: false });
  });

  it('an answer is read as a response, against the rule', async () => {
    const enc = scriptedEncoder();
    const request: ScoreRequest = {
      ...withRules('', [ALARMS]),
      messages: [
        { role: 'user', content: 'what can you do?' },
        { role: 'assistant', content: 'I set an alarm for you at 6 am.' },
      ],
    };
    const r = await engineWith(enc).score(request);
    expect(enc.seen[0]).toEqual({ role: 'response', text: 'I set an alarm for you at 6 am.' });
    expect(ruleScores(r)[0]).toMatchObject({ source: 'meaning', violated: true });
  });

  it('a failing encoder leaves the rule to its words, with a note', async () => {
    const r = await engineWith(scriptedEncoder(true)).score(
      withRules('please wake me at seven', [ALARMS]),
    );
    expect(ruleScores(r)[0]).toMatchObject({ violated: false });
    expect(r.reasoning).toMatch(/rules by meaning unavailable \(model file missing\)/);
  });
});
