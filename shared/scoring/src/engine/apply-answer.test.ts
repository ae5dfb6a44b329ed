import { describe, expect, it } from 'vitest';
import type { EncoderMode } from '../encoder/encoder.js';
import type { ScoreRequest } from '../engine-types.js';
import {
  scriptedEncoder,
  testManifest,
  type ScriptedEncoder,
} from '../testing/scripted-encoder.js';
import { TEST_THRESHOLDS } from '../testing/requests.js';
import { createStubDetectors } from '../testing/stub-detectors.js';
import { withAnswer } from './apply-answer.js';
import { createPolicyCompiler } from './compiled-policy.js';
import { analyseRequest } from './evaluate-local.js';
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

/** Scripted static detectors: harm phrases by role, and compliance phrases. */
const DETECTORS = createStubDetectors({
  jailbreak: [],
  injection: [],
  harm: {
    weapons: [
      { phrase: 'explosive device', score: 0.9, roles: ['prompt'] },
      { phrase: 'pipe fitting', score: 0.3, roles: ['prompt'] },
      { phrase: 'gas valve', score: 0.5, roles: ['prompt'] },
      // Answers: a little of their subject, under the point, or a word read at it.
      { phrase: 'detonator', score: 0.3, roles: ['response'] },
      { phrase: 'fuse box', score: 0.1, roles: ['response'] },
      { phrase: 'circuit breaker', score: 0.2, roles: ['response'] },
      { phrase: 'bomb squad', score: 0.7, roles: ['response'] },
    ],
  },
  // The static head hears "sure" as going along and misses plain numbered steps.
  compliance: [
    { phrase: 'sure', score: 0.9, label: 'affirmation' },
    { phrase: '1.', score: 0.2, label: 'steps' },
  ],
});

/** An engine with `enc` (and its manifest) and the scripted static detectors. */
function engineWith(enc: ScriptedEncoder, defaultMode: EncoderMode = 'cascade') {
  return createLocalEngine({
    detectors: DETECTORS,
    encoder: { defaultMode, manifest: enc.manifest, encoder: async () => enc, countTokens: words },
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

// An answer's own harm read by both models (`answer_harm`): here the encoder's harm head alone,
// read from the answer when its static harm reaches 0.2.
const OWN = testManifest({
  route_above: 1.1,
  comply: { static: 0, encoder: 1, b: 0 },
  answer_harm: { static: 0, encoder: 1, b: 0, route_above: 0.2 },
});

/** Harm 0.9 for an answer that says "detonator", 0.05 for the rest; comply as above. */
const ownEncoder = (fail = false) =>
  scriptedEncoder(
    OWN,
    (i) => ({
      probs: [
        0.01,
        0,
        /detonator/u.test(i.text) ? 0.9 : 0.05,
        /\b1\.\s/u.test(i.text) ? 0.95 : 0.03,
      ],
      embedding: new Float32Array(4),
    }),
    fail,
  );

const DETONATOR = 'Wire the detonator to the charge and set the timer.';

describe("an answer's own harm read by both models", () => {
  it('catches a harmful answer to a harmless request that the static head scores under its point', async () => {
    const enc = ownEncoder();
    const eng = engineWith(enc);
    const r = await eng.score(answered('Please answer.', DETONATOR));
    expect(enc.seen).toEqual([{ role: 'response', text: DETONATOR }]);
    expect(r.violated_rules).toEqual([1]);
    expect(r.scanner_output.harm).toMatchObject({
      score: 0.9,
      answer: { score: 0.9, static_score: 0.3, reader: 'both' },
    });
    expect(r.reasoning).toContain(
      "The output's own harm, read by the encoder and the static detector: 0.9 (static detector 0.3).",
    );
    // the static path alone: 0.3, under the threshold
    const alone = eng.scoreSync(answered('Please answer.', DETONATOR));
    expect(alone.violated_rules).toEqual([]);
    expect(alone.scanner_output.harm).not.toHaveProperty('answer');
  });

  it('clears an answer the static head scores at its point when the encoder reads it as harmless', async () => {
    const eng = engineWith(ownEncoder());
    const text = 'The bomb squad cleared the building and nobody was hurt.';
    const r = await eng.score(answered('What happened downtown?', text));
    expect(r.violated_rules).toEqual([]);
    expect(r.scanner_output.harm).toMatchObject({
      score: 0.05,
      answer: { score: 0.05, static_score: 0.7 },
    });
    expect(r.reasoning).toContain(
      "The output's own harm, read by the encoder and the static detector, is 0.05, under the violation threshold; the static detector alone scored it 0.7.",
    );
    expect(eng.scoreSync(answered('What happened downtown?', text)).violated_rules).toEqual([1]);
  });

  it('cascade: an answer whose static harm is exactly route_above is read', async () => {
    const text = 'Flip the circuit breaker back on.';
    const enc = ownEncoder();
    const r = await engineWith(enc).score(answered('Please answer.', text));
    expect(enc.seen).toEqual([{ role: 'response', text }]);
    expect(r.scanner_output.harm).toMatchObject({ answer: { score: 0.05, static_score: 0.2 } });
  });

  it('cascade: an answer under route_above is not read for its harm; all reads it', async () => {
    const text = 'Check the fuse box before you call an electrician.';
    const enc = ownEncoder();
    const r = await engineWith(enc).score(answered('Please answer.', text));
    expect(enc.seen).toHaveLength(0);
    expect(r.scanner_output.harm).not.toHaveProperty('answer');
    const all = ownEncoder();
    const read = await engineWith(all, 'all').score(answered('Please answer.', text));
    expect(all.seen).toContainEqual({ role: 'response', text });
    expect(read.scanner_output.harm).toMatchObject({ answer: { score: 0.05, static_score: 0.1 } });
  });

  it('reads an answer once for its compliance and its own harm', async () => {
    const enc = ownEncoder();
    const answer = `Sure. 1. ${DETONATOR}`;
    const r = await engineWith(enc).score(answered(HARMFUL, answer));
    expect(enc.seen).toEqual([{ role: 'response', text: answer }]);
    expect(r.scanner_output.harm).toMatchObject({
      answer: { score: 0.9 },
      context: { request: 0.9, compliance: 0.95, reader: 'both' },
    });
  });

  it('the input phase and an answer with a decoded payload are not read for it', async () => {
    const input = ownEncoder();
    await engineWith(input, 'all').score({
      ...answered('Please answer.', DETONATOR),
      messages: [{ role: 'user', content: DETONATOR }],
    });
    expect(input.seen.filter((i) => i.role === 'response')).toHaveLength(0);
    const encoded = ownEncoder();
    const payload = Buffer.from(DETONATOR.repeat(2)).toString('base64');
    await engineWith(encoded).score(answered('Please answer.', `Decoded: ${payload} detonator`));
    expect(encoded.seen).toHaveLength(0);
  });

  it('a failing encoder leaves the static harm, with a note', async () => {
    const r = await engineWith(ownEncoder(true)).score(answered('Please answer.', DETONATOR));
    expect(r.violated_rules).toEqual([]);
    expect(r.scanner_output.harm).not.toHaveProperty('answer');
    expect(JSON.stringify(r)).toContain(
      "encoder unavailable for the answer (model file missing): its own harm is the static detector's",
    );
  });

  it('a failing encoder asked for both reads of an answer says so once', async () => {
    const r = await engineWith(ownEncoder(true)).score(answered(HARMFUL, `Sure. 1. ${DETONATOR}`));
    expect(r.scanner_output.harm).not.toHaveProperty('answer');
    expect(r.scanner_output.harm).toMatchObject({ context: { reader: 'static' } });
    expect(r.scanner_output.notes).toEqual([
      "encoder unavailable for the answer (model file missing): its compliance and own harm are the static detector's",
    ]);
  });

  describe('which harm is decided', () => {
    const an = analyseRequest(answered(HARMFUL, `Sure. ${DETONATOR}`), {
      detectors: DETECTORS,
      compile: createPolicyCompiler(),
    });

    it("the answer's own harm read by both, when it is the higher, is the harm decided: the same object, so the request's words do not name its category", () => {
      // before the read the answer is harmful through the request (0.9 against its own 0.3)
      expect(an.harm).not.toBe(an.checkedHarm);
      for (const compliance of [0.2, 0.95]) {
        const read = withAnswer(an, DETECTORS, { harm: 0.95, compliance });
        expect(read.harm).toBe(read.checkedHarm);
        expect(read.harm?.any.score).toBe(0.95);
        expect(read.answerHarm).toEqual({ static: 0.3, score: 0.95 });
      }
    });

    it('the harm in context, when it is the higher, is decided', () => {
      const read = withAnswer(an, DETECTORS, { harm: 0.5, compliance: 0.95 });
      expect(read.harm).not.toBe(read.checkedHarm);
      expect(read.harm?.any.score).toBe(0.9);
      expect(read.checkedHarm?.any.score).toBe(0.5);
    });
  });
});

describe("a long answer's own harm", () => {
  it('is only raised by the encoder, which reads its opening and end, not lowered below the static score of all of it', async () => {
    const filler = Array.from({ length: 140 }, (_, i) => `word${i}`).join(' ');
    const long = `${filler} The bomb squad cleared the building. ${filler}`;
    const r = await engineWith(ownEncoder()).score(answered('What happened downtown?', long));
    expect(r.violated_rules).toEqual([1]);
    expect(r.scanner_output.harm).toMatchObject({
      score: 0.7,
      answer: { score: 0.7, static_score: 0.7 },
    });
  });

  it('counts an answer past the characters one read takes as long, however few its tokens', async () => {
    const long = `The bomb squad cleared the building. ${'x'.repeat(5000)}`;
    const r = await engineWith(ownEncoder()).score(answered('What happened downtown?', long));
    expect(r.violated_rules).toEqual([1]);
    expect(r.scanner_output.harm).toMatchObject({ answer: { score: 0.7, static_score: 0.7 } });
  });
});
