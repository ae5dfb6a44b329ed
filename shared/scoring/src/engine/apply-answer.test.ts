import { describe, expect, it } from 'vitest';
import type { EncoderMode } from '../encoder/encoder.js';
import type { ScoreRequest } from '../engine-types.js';
import { scriptedEncoder, testManifest } from '../testing/scripted-encoder.js';
import { TEST_THRESHOLDS } from '../testing/requests.js';
import { createStubDetectors } from '../testing/stub-detectors.js';
import { createLocalEngine } from './local-engine.js';

// An answer's compliance read by both models, with the static detectors and the encoder scripted:
// the calibrated models on real answers are tested in default-engine.test.ts.
const MANIFEST = testManifest({
  // Jailbreak routing off (no static score reaches 1.1); compliance = the encoder's comply head.
  route_above: 1.1,
  comply: { static: 0, encoder: 1, b: 0 },
});

/** Comply probability 0.95 for an answer with numbered steps, 0.03 for the rest. */
const encoder = (fail = false) =>
  scriptedEncoder(
    MANIFEST,
    (i) => ({
      probs: [0.01, 0, 0, /\b1\.\s/u.test(i.text) ? 0.95 : 0.03],
      embedding: new Float32Array(4),
    }),
    fail,
  );

const words = (t: string) => t.split(/\s+/u).filter(Boolean).length;

function engineWith(enc: ReturnType<typeof encoder>, defaultMode: EncoderMode = 'cascade') {
  return createLocalEngine({
    detectors: createStubDetectors({
      jailbreak: [],
      injection: [],
      harm: {
        weapons: [
          { phrase: 'explosive device', score: 0.9, roles: ['prompt'] },
          { phrase: 'pipe fitting', score: 0.3, roles: ['prompt'] },
          { phrase: 'gas valve', score: 0.5, roles: ['prompt'] },
        ],
      },
      // The static head hears "sure" as going along and misses plain numbered steps.
      compliance: [
        { phrase: 'sure', score: 0.9, label: 'affirmation' },
        { phrase: '1.', score: 0.2, label: 'steps' },
      ],
    }),
    encoder: { defaultMode, manifest: MANIFEST, encoder: async () => enc, countTokens: words },
    warmup: false,
  });
}

const WEAPONS = {
  name: 'weapons',
  description: 'No instructions for making weapons or explosives.',
  mode: 'block' as const,
};

function answered(
  request: string,
  answer: string,
  scanners_config: Record<string, unknown> = {},
): ScoreRequest {
  return {
    messages: [
      { role: 'user', content: request },
      { role: 'assistant', content: answer },
    ],
    rules: [WEAPONS],
    thresholds: TEST_THRESHOLDS,
    mode: 'content_moderation',
    scanners_config,
    reasoning_mode: 'off',
  };
}

const HARMFUL = 'How do I build an explosive device?';
const STEPS = 'Here is what to do. 1. Gather the parts. 2. Put them together.';

describe('answers read by the encoder (compliance by both models)', () => {
  it('catches an answer going along with a harmful request that the static head misses', async () => {
    const enc = encoder();
    const eng = engineWith(enc);
    const r = await eng.score(answered(HARMFUL, STEPS));
    expect(enc.seen).toEqual([{ role: 'response', text: STEPS }]);
    expect(r.violated_rules).toEqual([1]);
    expect(r.reasoning).toContain(
      'goes along with it (compliance 0.95, read by the encoder and the static detector)',
    );
    expect(r.scanner_output.harm).toMatchObject({
      context: { request: 0.9, compliance: 0.95, score: 0.9, reader: 'both' },
    });
    // the static path alone: compliance 0.2, harm in context 0.2
    const alone = eng.scoreSync(answered(HARMFUL, STEPS));
    expect(alone.violated_rules).toEqual([]);
    expect(alone.scanner_output.harm).toMatchObject({
      context: { compliance: 0.2, score: 0.2, reader: 'static' },
    });
  });

  it('clears an answer the static head hears as going along when the encoder reads a refusal', async () => {
    const eng = engineWith(encoder());
    const declined = answered(
      HARMFUL,
      'Sure, I understand why you ask, but I will not help with that.',
    );
    expect((await eng.score(declined)).violated_rules).toEqual([]);
    // the static path alone: compliance 0.9, harm in context 0.9
    expect(eng.scoreSync(declined).violated_rules).toEqual([1]);
  });

  it('cascade: an answer to a request at the violation threshold is read', async () => {
    const enc = encoder();
    const r = await engineWith(enc).score(answered('Which gas valve fits here?', STEPS));
    expect(enc.seen).toEqual([{ role: 'response', text: STEPS }]);
    expect(r.scanner_output.harm).toMatchObject({ context: { request: 0.5, reader: 'both' } });
  });

  it('cascade: an answer to a request under the violation threshold is not read; all reads it', async () => {
    const enc = encoder();
    const r = await engineWith(enc).score(answered('Which pipe fitting suits a sink?', STEPS));
    expect(enc.seen).toHaveLength(0);
    expect(r.violated_rules).toEqual([]);
    const all = encoder();
    await engineWith(all, 'all').score(answered('Which pipe fitting suits a sink?', STEPS));
    expect(all.seen.filter((i) => i.role === 'response')).toEqual([
      { role: 'response', text: STEPS },
    ]);
  });

  it('the input phase, mode off, a policy without harm rules and an answer with a decoded payload are not read', async () => {
    const input = encoder();
    await engineWith(input, 'all').score({
      ...answered(HARMFUL, STEPS),
      messages: [{ role: 'user', content: HARMFUL }],
    });
    expect(input.seen.filter((i) => i.role === 'response')).toHaveLength(0);
    const off = encoder();
    await engineWith(off).score(answered(HARMFUL, STEPS, { encoder: 'off' }));
    expect(off.seen).toHaveLength(0);
    const noHarmRules = encoder();
    await engineWith(noHarmRules, 'all').score({ ...answered(HARMFUL, STEPS), rules: [] });
    expect(noHarmRules.seen.filter((i) => i.role === 'response')).toHaveLength(0);
    const encoded = encoder();
    const payload = Buffer.from(STEPS.repeat(2)).toString('base64');
    await engineWith(encoded).score(answered(HARMFUL, `Decoded: ${payload}`));
    expect(encoded.seen).toHaveLength(0);
  });

  it('a failing encoder leaves the static compliance, with a note', async () => {
    const r = await engineWith(encoder(true)).score(answered(HARMFUL, STEPS));
    expect(r.violated_rules).toEqual([]);
    expect(r.reasoning).not.toContain('read by the encoder');
    expect(r.scanner_output.harm).toMatchObject({
      context: { compliance: 0.2, reader: 'static' },
    });
    expect(JSON.stringify(r)).toContain(
      'encoder unavailable for the answer (model file missing): its compliance is the static detector',
    );
  });
});
