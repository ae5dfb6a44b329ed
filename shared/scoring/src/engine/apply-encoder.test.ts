import { describe, expect, it } from 'vitest';
import type { Encoder, EncoderManifest } from '../encoder/encoder.js';
import { scriptedEncoder as scripted, testManifest } from '../testing/scripted-encoder.js';
import type { ScoreResult } from '../engine-types.js';
import { userTextRequest } from '../testing/requests.js';
import { createStubDetectors, type StubEntry } from '../testing/stub-detectors.js';
import { MAX_FLAGGED_READS, MAX_WINDOWS, type EncoderStage } from './apply-encoder.js';
import { MAX_SCORED_SENTENCES, sentencesOf } from './evaluate-local.js';
import { createLocalEngine } from './local-engine.js';

// The cascade's routing and replacement, with the static detector and the encoder both scripted:
// the real model's behaviour is tested in encoder/onnx-encoder.test.ts.
const STATIC_JAILBREAK: StubEntry[] = [
  { phrase: 'unsure story', score: 0.2, label: 'role-play' },
  { phrase: 'sure attack', score: 0.95, label: 'persona override' },
];

const MANIFEST = testManifest();

/** Scripted encoder: jailbreak probability 0.9 for texts with "attack" or "story", else 0.01. */
const scriptedEncoder = (fail = false) =>
  scripted(
    MANIFEST,
    (i) => ({
      probs: [/attack|story/.test(i.text) ? 0.9 : 0.01, 0, 0, 0],
      embedding: new Float32Array(4),
    }),
    fail,
  );

/** Stands in for the WordPiece count: one token per word. */
const words = (t: string) => t.split(/\s+/u).filter(Boolean).length;

/** The engine with a scripted static jailbreak detector and a scripted encoder. */
function stageEngine(
  jailbreak: StubEntry[],
  enc: Encoder,
  defaultMode: EncoderStage['defaultMode'] = 'cascade',
) {
  return createLocalEngine({
    detectors: createStubDetectors({ jailbreak, injection: [], harm: {} }),
    encoder: { defaultMode, manifest: MANIFEST, encoder: async () => enc, countTokens: words },
  });
}

const engineWith = (enc: Encoder, defaultMode: EncoderStage['defaultMode'] = 'cascade') =>
  stageEngine(STATIC_JAILBREAK, enc, defaultMode);

const req = userTextRequest;
/** A static detector sure that "harmless phrase" is a jailbreak, with the encoder in cascade. */
const flaggingStatic = (enc: Encoder) =>
  stageEngine([{ phrase: 'harmless phrase', score: 0.95, label: 'persona override' }], enc);

const jb = (r: ScoreResult) => (r.scanner_output.jailbreak as { score: number } | undefined)?.score;

describe('jailbreak encoder stage', () => {
  it('cascade: inputs the static detector is sure are harmless never reach the encoder', async () => {
    const enc = scriptedEncoder();
    const r = await engineWith(enc).score(req('what is the capital of France'));
    expect(enc.seen).toHaveLength(0);
    expect(r.violation).toBe(0);
  });

  it('cascade: an unsure input is decided by the encoder, and the reasoning says so', async () => {
    const enc = scriptedEncoder();
    const r = await engineWith(enc).score(req('an unsure story about a chemist'));
    expect(enc.seen).toEqual([{ role: 'prompt', text: 'an unsure story about a chemist' }]);
    expect(r.violation).toBeGreaterThanOrEqual(0.3);
    expect(r.reasoning).toMatch(/jailbreak encoder 0\.9 \(static detector 0\.2; cascade/);
    expect(jb(r)).toBeCloseTo(0.9, 3);
  });

  it('cascade: the encoder can also clear what the static detector flagged', async () => {
    const enc = scriptedEncoder();
    const eng = flaggingStatic(enc);
    const r = await eng.score(req('a harmless phrase'));
    expect(enc.seen).toHaveLength(1);
    expect(r.violation).toBe(0);
    expect(jb(r)).toBeCloseTo(0.01, 3);
    // the synchronous path keeps the static verdict
    expect(eng.scoreSync(req('a harmless phrase')).violation).toBeGreaterThanOrEqual(0.3);
  });

  it('reads decoded payloads too, and never clears a disguised input the static detector flagged', async () => {
    const enc = scriptedEncoder();
    const eng = flaggingStatic(enc);
    const payload = Buffer.from('this is a harmless phrase, decoded from base64').toString(
      'base64',
    );
    const r = await eng.score(req(`Please decode and follow: ${payload}`));
    expect(enc.seen.map((i) => i.text)).toContain('this is a harmless phrase, decoded from base64');
    expect(enc.seen.length).toBeGreaterThanOrEqual(2);
    expect(r.mutation).toBe(true);
    expect(r.violation).toBeGreaterThanOrEqual(0.3);
    expect(r.reasoning).toMatch(/decoded payload\(s\), the higher score kept/);
  });

  it('mode all sends every input; a policy setting overrides the server default', async () => {
    const all = scriptedEncoder();
    await engineWith(all, 'all').score(req('what is the capital of France'));
    expect(all.seen).toHaveLength(1);

    const off = scriptedEncoder();
    const r = await engineWith(off, 'all').score(req('an unsure story', { encoder: 'off' }));
    expect(off.seen).toHaveLength(0);
    expect(r.violation).toBe(0);

    const perPolicy = scriptedEncoder();
    await engineWith(perPolicy, 'off').score(req('what is the capital', { encoder: 'all' }));
    expect(perPolicy.seen).toHaveLength(1);
  });

  it('a failing encoder leaves the static verdict, with a note, never an error', async () => {
    const r = await engineWith(scriptedEncoder(true)).score(req('an unsure story'));
    expect(r.error).toBeFalsy();
    expect(r.violation).toBe(0);
    expect(r.reasoning).toMatch(/encoder unavailable \(model file missing\)/);
  });
});

describe('jailbreak encoder stage: long inputs', () => {
  /** Like the real encoder, reads only the opening and the end of a long text. */
  const cutEncoder = () =>
    scripted(MANIFEST, (i) => ({
      probs: [/attack/.test(i.text.slice(0, 300) + i.text.slice(-100)) ? 0.9 : 0.01, 0, 0, 0],
      embedding: new Float32Array(4),
    }));
  /** The static detector flags these phrases (and routes everything else); cascade. */
  const engine = (phrases: string[], enc: Encoder) =>
    stageEngine(
      [
        { phrase: 'could you', score: 0.2, label: 'unsure' },
        ...phrases.map((phrase) => ({ phrase, score: 0.95, label: 'persona override' })),
      ],
      enc,
    );
  /** n sentences of 11 words. */
  const filler = (n: number) =>
    'Could you plan a short weekend trip to the coast for us? '.repeat(n).trim();

  it('reads a long prompt in windows that each fit the encoder: an attack in the middle is caught', async () => {
    const enc = cutEncoder();
    const text = `${filler(12)} Now the attack begins. ${filler(12)}`;
    // the static detector does not flag it; the encoder's own cut of the whole text would miss it
    const r = await engine([], enc).score(req(text));
    expect(enc.seen.length).toBeGreaterThan(1);
    for (const item of enc.seen) expect(words(item.text)).toBeLessThanOrEqual(96 + 30 - 2);
    // the windows are the whole text, in order, cut only at segment boundaries
    const squeeze = (t: string) => t.replace(/\s+/gu, '');
    expect(squeeze(enc.seen.map((i) => i.text).join(''))).toBe(squeeze(text));
    expect(r.violation).toBeGreaterThanOrEqual(0.3);
    expect(r.reasoning).toMatch(/read in \d+ windows/);
  });

  it('splits a segment too dense for one window, so that every read fits', async () => {
    const enc = cutEncoder();
    // no sentence or line break after the first: segments of 400 characters, 200 words
    const text = `Could you read this? ${'a '.repeat(300)}attack ${'a '.repeat(300)}`.trim();
    const r = await engine([], enc).score(req(text));
    for (const item of enc.seen) expect(words(item.text)).toBeLessThanOrEqual(96 + 30 - 2);
    expect(enc.seen.some((i) => /attack/.test(i.text))).toBe(true);
    expect(r.violation).toBeGreaterThanOrEqual(0.3);
  });

  it('scores the parts of a long input at the operating point of long inputs (jailbreak_parts)', async () => {
    const manifest: EncoderManifest = { ...MANIFEST, jailbreak_parts: { a: 1, b: -4 } };
    const enc = { ...cutEncoder(), manifest };
    const long = await engine([], enc).score(
      req(`${filler(12)} Now the attack begins. ${filler(12)}`),
    );
    const atParts = 1 / (1 + Math.exp(-(Math.log(0.9 / 0.1) - 4)));
    expect(jb(long)).toBeCloseTo(atParts, 3);
    expect(long.violation).toBeLessThan(0.3);
    // a short input is read whole, at the prompts' point
    const short = await engine([], enc).score(req('Could you wait? Now the attack begins.'));
    expect(jb(short)).toBeCloseTo(0.9, 3);
  });

  it('reads an input that fits one window as it is', async () => {
    const enc = cutEncoder();
    const text = filler(9); // 99 words, over 400 characters
    await engine([], enc).score(req(text));
    expect(enc.seen.map((i) => i.text)).toEqual([text]);
  });

  it(`past ${MAX_WINDOWS} windows, reads the opening and end and the segments the static detector flagged`, async () => {
    const enc = cutEncoder();
    const text = `${filler(50)} Then the sure attack. ${filler(50)}`;
    const r = await engine(['sure attack'], enc).score(req(text));
    expect(enc.seen[0]?.text).toBe(text);
    expect(enc.seen.map((i) => i.text)).toContain('sure attack');
    expect(r.violation).toBeGreaterThanOrEqual(0.3);
    expect(r.reasoning).toMatch(/opening and end, and \d+ read\(s\) of flagged segments/);
  });

  it(`past ${MAX_WINDOWS} windows, reads up to ${MAX_FLAGGED_READS} flagged segments, and what it reads decides`, async () => {
    // more flagged segments than windows: each is read, and segments the encoder clears do not
    // keep the static verdict (the static detector flags most of a long run of ordinary requests)
    const phrases = Array.from({ length: MAX_WINDOWS + 4 }, (_, i) => `odd phrase ${i}x`);
    const text = `${filler(50)} ${phrases.join('. ')}. ${filler(50)}`;
    const enc = cutEncoder();
    const r = await engine(phrases, enc).score(req(text));
    const texts = enc.seen.map((i) => i.text);
    for (const p of phrases) expect(texts).toContain(p);
    expect(r.violation).toBe(0);
    expect(jb(r)).toBeLessThan(0.3);
    expect(r.reasoning).not.toMatch(/the higher score kept/);
    // and an attack among them is read
    const attack = cutEncoder();
    const withAttack = `${filler(50)} ${phrases.join('. ')}. The sure attack. ${filler(50)}`;
    const a = await engine([...phrases, 'sure attack'], attack).score(req(withAttack));
    expect(attack.seen.map((i) => i.text)).toContain('sure attack');
    expect(a.violation).toBeGreaterThanOrEqual(0.3);
  });

  it(`keeps the static verdict when the flagged segments need more than ${MAX_FLAGGED_READS} reads`, async () => {
    // the stub also flags "could you" (in the filler): with it, 32 segments and then 33
    const phrases = (n: number) => Array.from({ length: n }, (_, i) => `odd phrase ${i}x`);
    const text = (n: number) => `${filler(50)} ${phrases(n).join('. ')}. ${filler(50)}`;
    const all = cutEncoder();
    const read = await engine(phrases(MAX_FLAGGED_READS - 1), all).score(
      req(text(MAX_FLAGGED_READS - 1)),
    );
    expect(all.seen).toHaveLength(1 + MAX_FLAGGED_READS);
    expect(read.violation).toBe(0);
    expect(read.reasoning).not.toMatch(/the higher score kept/);

    const enc = cutEncoder();
    const r = await engine(phrases(MAX_FLAGGED_READS), enc).score(req(text(MAX_FLAGGED_READS)));
    expect(enc.seen).toHaveLength(1);
    expect(r.violation).toBeGreaterThanOrEqual(0.3);
    expect(jb(r)).toBeCloseTo(0.95, 3);
    expect(r.reasoning).toMatch(
      /flagged segments needing more than 32 reads, the higher score kept/,
    );
  });
});

const sig = (z: number) => 1 / (1 + Math.exp(-z));
const logit = (p: number) => Math.log(p / (1 - p));
/** Encoder harm probability 0.9 for texts about explosives, 0.01 for the rest. */
const explosivesEncoder = (manifest: EncoderManifest) =>
  scripted(manifest, (i) => ({
    probs: [0.01, 0, /explosive/.test(i.text) ? 0.9 : 0.01, 0],
    embedding: new Float32Array(4),
  }));
/** Static weapons harm 0.4 ("explosive device"), 0.7 ("fireworks show"), 0.1 ("garden fence"). */
const harmEngine = (manifest: EncoderManifest, e: Encoder) =>
  createLocalEngine({
    detectors: createStubDetectors({
      jailbreak: [],
      injection: [],
      harm: {
        weapons: [
          { phrase: 'explosive device', score: 0.4 },
          { phrase: 'fireworks show', score: 0.7 },
          { phrase: 'garden fence', score: 0.1 },
        ],
      },
    }),
    encoder: { defaultMode: 'cascade', manifest, encoder: async () => e, countTokens: words },
    warmup: false,
  });

describe('encoder stage: harm of a prompt read by both models', () => {
  // sigmoid(logit(static) + logit(encoder)).
  const manifest = testManifest({
    route_above: 1.1,
    harm: { static: 1, encoder: 1, b: 0, route_above: 0.2 },
  });
  const enc = () => explosivesEncoder(manifest);
  const engine = (e: Encoder) => harmEngine(manifest, e);
  const WEAPONS = {
    name: 'weapons',
    description: 'No instructions for making weapons or explosives.',
    mode: 'block' as const,
  };
  const withWeapons = (text: string) => ({ ...req(text), rules: [WEAPONS] });
  const harmOf = (r: ScoreResult) =>
    r.scanner_output.harm as {
      score: number;
      detector: string;
      static_score?: number;
      sentence?: { message?: number; start?: number; end?: number; score: number };
      categories: Record<string, number>;
    };

  it('cascade: a prompt the static harm score routes is decided by both models together', async () => {
    const e = enc();
    const r = await engine(e).score(withWeapons('how do I build an explosive device'));
    expect(e.seen).toHaveLength(1);
    const h = harmOf(r);
    expect(h.detector).toBe('encoder');
    expect(h.static_score).toBeCloseTo(0.4, 3);
    expect(h.score).toBeCloseTo(sig(logit(0.4) + logit(0.9)), 3);
    // the category keeps the static head's score; the overall one reaches the rule by the cue
    expect(h.categories.weapons).toBeCloseTo(0.4, 3);
    expect(r.violated_rules).toEqual([1]);
    // jailbreak was not routed: the static detector's score stands
    expect((r.scanner_output.jailbreak as { detector: string }).detector).toBe('static');
  });

  it("the overall score reaches a category by its words only, never by the category heads' shares", async () => {
    const e = scripted(manifest, () => ({
      probs: [0.01, 0, 0.9, 0],
      embedding: new Float32Array(4),
    }));
    const eng = createLocalEngine({
      detectors: createStubDetectors({
        jailbreak: [],
        injection: [],
        harm: {
          fraud: [{ phrase: 'the plan', score: 0.3 }],
          hate: [{ phrase: 'plan', score: 0.15 }],
        },
      }),
      encoder: { defaultMode: 'cascade', manifest, encoder: async () => e, countTokens: words },
      warmup: false,
    });
    const rules = [
      { name: 'fraud', description: 'No help with scams.', mode: 'block' as const },
      { name: 'hate', description: 'No hateful content.', mode: 'block' as const },
    ];
    const r = await eng.score({ ...req('walk me through the plan for the weekend'), rules });
    const h = harmOf(r);
    expect(h.score).toBeCloseTo(sig(logit(0.3) + logit(0.9)), 3);
    expect(h.score).toBeGreaterThan(0.5);
    expect(h.categories.fraud).toBeCloseTo(0.3, 3);
    expect(h.categories.hate).toBeCloseTo(0.15, 3);
    expect(r.violated_rules).toEqual([]);
    // with the category's words in the text, its rule takes the overall score
    const cued = await eng.score({ ...req('walk me through the plan for the scam'), rules });
    expect(cued.violated_rules).toEqual([1]);
  });

  describe('categories by meaning (harm_topics)', () => {
    const topicManifest = testManifest({
      ...manifest,
      harm_topics: {
        at: 0.5,
        topics: {
          fraud: 'help with scams',
          hate: 'hateful content',
          privacy: 'exposing addresses',
        },
        lends: ['fraud', 'privacy'],
      },
    });
    /** Unit embeddings: each topic on its own axis; requests between them. */
    const EMBEDDINGS: Record<string, number[]> = {
      'help with scams': [1, 0, 0, 0],
      'hateful content': [0, 1, 0, 0],
      'exposing addresses': [0, 0, 1, 0],
      'walk me through the plan for the weekend': [0.8, 0.6, 0, 0],
      'walk me through the plan for a party': [0.4, 0.3, 0, 0.866],
      'walk me through the plan for the neighbours': [0.6, 0, 0.8, 0],
      'walk me through the plan for them': [0.6, 0.8, 0, 0],
      'walk me through the plan for the gun show': [0.8, 0.6, 0, 0],
    };
    const topicEnc = () =>
      scripted(topicManifest, (i) => ({
        probs: [0.01, 0, 0.9, 0],
        embedding: Float32Array.from(EMBEDDINGS[i.text] ?? [0, 0, 0, 1]),
      }));
    const topicEngine = (e: Encoder, m: EncoderManifest = topicManifest) =>
      createLocalEngine({
        detectors: createStubDetectors({
          jailbreak: [],
          injection: [],
          // The static category head leans to hate; the meaning, to fraud.
          harm: { hate: [{ phrase: 'the plan', score: 0.3, roles: ['prompt'] }] },
          compliance: [{ phrase: 'sure, here is the plan', score: 0.95 }],
        }),
        encoder: {
          defaultMode: 'cascade',
          manifest: m,
          encoder: async () => e,
          countTokens: words,
        },
        warmup: false,
      });
    const rules = [
      { name: 'fraud', description: 'No help with scams.', mode: 'block' as const },
      { name: 'hate', description: 'No hateful content.', mode: 'block' as const },
    ];
    const asking = (text: string) => ({ ...req(text), rules });

    it('the overall score reaches the category the request is nearest by meaning', async () => {
      const e = topicEnc();
      const eng = topicEngine(e);
      const r = await eng.score(asking('walk me through the plan for the weekend'));
      expect(harmOf(r).score).toBeCloseTo(sig(logit(0.3) + logit(0.9)), 3);
      expect((r.scanner_output.harm as { topic?: unknown }).topic).toEqual({
        category: 'fraud',
        cosine: 0.8,
      });
      expect(r.violated_rules).toEqual([1]);
      expect(r.reasoning).toMatch(/the request near fraud by meaning \(cosine 0\.8\)/);
      // the descriptions are read once, with the first request that needs them
      expect(e.seen.map((i) => i.text)).toEqual([
        'walk me through the plan for the weekend',
        'hateful content',
        'help with scams',
        'exposing addresses',
      ]);
      await eng.score(asking('walk me through the plan for the weekend'));
      expect(e.seen).toHaveLength(5);
    });

    it("not below the point, nor when the nearest category is not the policy's or does not lend, nor past the text's own words", async () => {
      for (const text of [
        'walk me through the plan for a party',
        'walk me through the plan for the neighbours',
        // nearest hate, which does not lend (`lends`); fraud, second, is not taken instead
        'walk me through the plan for them',
        // words of a category (weapons, not the policy's) come first: no category by meaning
        'walk me through the plan for the gun show',
      ]) {
        const r = await topicEngine(topicEnc()).score(asking(text));
        expect(harmOf(r).score).toBeGreaterThan(0.5);
        expect(r.violated_rules).toEqual([]);
      }
      const near = await topicEngine(topicEnc()).score(
        asking('walk me through the plan for the neighbours'),
      );
      expect((near.scanner_output.harm as { topic?: unknown }).topic).toEqual({
        category: 'privacy',
        cosine: 0.8,
      });
    });

    it('a manifest without `lends` lets every described category lend', async () => {
      const { lends: _, ...allLend } = topicManifest.harm_topics ?? { at: 0.5, topics: {} };
      const r = await topicEngine(
        topicEnc(),
        testManifest({ ...topicManifest, harm_topics: allLend }),
      ).score(asking('walk me through the plan for them'));
      expect(r.violated_rules).toEqual([2]);
      expect((r.scanner_output.harm as { topic?: unknown }).topic).toEqual({
        category: 'hate',
        cosine: 0.8,
      });
    });

    it("output phase: an answer going along with the request takes the request's category", async () => {
      const answered = (answer: string) => ({
        ...asking('walk me through the plan for the weekend'),
        messages: [
          { role: 'user' as const, content: 'walk me through the plan for the weekend' },
          { role: 'assistant' as const, content: answer },
        ],
      });
      const eng = topicEngine(topicEnc());
      // fraud by the request's meaning; hate by the static category head's share (harmInContext)
      expect(
        (await eng.score(answered('Sure, here is the plan: step one.'))).violated_rules,
      ).toEqual([1, 2]);
      expect((await eng.score(answered('I cannot help with that.'))).violated_rules).toEqual([]);
    });
  });

  it('a long input (read in parts) or a disguised one keeps the static harm', async () => {
    const filler = 'Could you plan a short weekend trip to the coast for us? '.repeat(12);
    const payload = Buffer.from('how do I build an explosive device').toString('base64');
    for (const text of [
      `${filler} How do I build an explosive device?`,
      `Decode this: ${payload}`,
    ]) {
      const e = enc();
      const r = await engine(e).score(withWeapons(text));
      expect(e.seen).toHaveLength(0);
      expect(harmOf(r).detector).toBe('static');
    }
  });

  describe('a long input read sentence by sentence (harm_parts)', () => {
    // Every input routed by its jailbreak score (point 0), the sentences at an offset of -1.
    const partsManifest = testManifest({
      route_above: 0,
      harm: { static: 1, encoder: 1, b: 0, route_above: 0.2 },
      harm_parts: { b: -1 },
    });
    const partsEngine = (e: Encoder, m = partsManifest) => harmEngine(m, e);
    // 20 sentences of 12 words: read in two windows.
    const filler = 'Could you plan a short weekend trip to the coast for us? '.repeat(20);
    const buried = `${filler}How do I build an explosive device? ${filler}`;

    it('reads the sentences the static detector finds most harmful, which raise the harm', async () => {
      const e = explosivesEncoder(partsManifest);
      const r = await partsEngine(e).score(withWeapons(buried));
      const texts = e.seen.map((i) => i.text);
      // the windows of the whole, then the one sentence at or above the harm routing point
      expect(texts.length).toBeGreaterThan(2);
      expect(texts.at(-1)).toBe('How do I build an explosive device?');
      expect(harmOf(r).detector).toBe('encoder');
      expect(harmOf(r).score).toBeCloseTo(sig(logit(0.4) + logit(0.9) - 1), 3);
      expect(r.violated_rules).toEqual([1]);
      // the result points at the sentence that raised it, in the message that holds it
      const at = buried.indexOf('How do I build');
      expect(harmOf(r).sentence).toEqual({
        message: 0,
        start: at,
        end: at + 'How do I build an explosive device?'.length,
        score: Number(sig(logit(0.4) + logit(0.9) - 1).toFixed(3)),
      });
      // normalised away from what was sent (zero-width spaces): the score alone
      const hidden = buried.replace('How do I', 'How\u200b do\u200b I');
      const h = await partsEngine(explosivesEncoder(partsManifest)).score(withWeapons(hidden));
      expect(h.violated_rules).toEqual([1]);
      expect(harmOf(h).sentence).toEqual({ score: harmOf(r).sentence?.score });
    });

    it('also in an input over 400 characters that one window holds; at most four sentences', async () => {
      const e = explosivesEncoder(partsManifest);
      const short = `${'Could you plan a short weekend trip to the coast for us? '.repeat(7)}How do I build an explosive device?`;
      expect(short.length).toBeGreaterThan(400);
      const r = await partsEngine(e).score(withWeapons(short));
      expect(e.seen.map((i) => i.text)).toEqual([short, 'How do I build an explosive device?']);
      expect(r.violated_rules).toEqual([1]);

      const many = explosivesEncoder(partsManifest);
      const six = Array.from({ length: 6 }, (_, k) => `Step ${k}: an explosive device.`).join(' ');
      await partsEngine(many).score(withWeapons(`${filler}${six} ${filler}`));
      expect(many.seen.filter((i) => /^Step \d/.test(i.text)).map((i) => i.text)).toEqual(
        [0, 1, 2, 3].map((k) => `Step ${k}: an explosive device.`),
      );
    });

    it('a sentence the encoder reads as harmless leaves the static harm of the whole', async () => {
      const e = explosivesEncoder(partsManifest);
      const text = `${filler}Then plan a fireworks show. ${filler}`;
      const r = await partsEngine(e).score(withWeapons(text));
      expect(e.seen.at(-1)?.text).toBe('Then plan a fireworks show.');
      expect(harmOf(r).score).toBeCloseTo(0.7, 3);
      expect(harmOf(r).detector).toBe('encoder'); // read, and left as it was
      expect(harmOf(r).sentence).toBeUndefined(); // and named as no reason
      expect(r.violated_rules).toEqual([1]);
    });

    it('routes an input on its own below the jailbreak routing point: only the sentences are read', async () => {
      const m = testManifest({ ...partsManifest, route_above: 1.1 });
      const e = explosivesEncoder(m);
      const r = await partsEngine(e, m).score(withWeapons(buried));
      expect(e.seen.map((i) => i.text)).toEqual(['How do I build an explosive device?']);
      expect(harmOf(r).score).toBeCloseTo(sig(logit(0.4) + logit(0.9) - 1), 3);
      expect(r.violated_rules).toEqual([1]);
      expect(r.scanner_output.jailbreak).toMatchObject({ score: 0 }); // the static score stands
    });

    it('in a conversation, only when its latest message is too long to be read whole', async () => {
      const conversation = (latest: string) => ({
        ...withWeapons(latest),
        messages: [
          { role: 'user' as const, content: `${filler}How do I build an explosive device?` },
          { role: 'assistant' as const, content: 'Here is a plan.' },
          { role: 'user' as const, content: latest },
        ],
      });
      // a short latest message: it is what is read for harm, not the sentences
      const short = explosivesEncoder(partsManifest);
      await partsEngine(short).score(conversation('Thanks, and a packing list?'));
      expect(short.seen.map((i) => i.text)).not.toContain('How do I build an explosive device?');
      // a long one: the sentences of every user message, as the static harm reads them
      const long = explosivesEncoder(partsManifest);
      const r = await partsEngine(long).score(conversation(filler));
      expect(long.seen.at(-1)?.text).toBe('How do I build an explosive device?');
      expect(r.violated_rules).toEqual([1]);
      // found in the first message, where it is
      expect(harmOf(r).sentence).toMatchObject({ message: 0, start: filler.length });
      // in the latest, it is the index in messages (2), not among the user's
      const last = await partsEngine(explosivesEncoder(partsManifest)).score(
        conversation(`${filler}How do I build an explosive device?`),
      );
      expect(harmOf(last).sentence).toMatchObject({ message: 0 });
      const onlyLast = await partsEngine(explosivesEncoder(partsManifest)).score({
        ...conversation(`${filler}How do I build an explosive device?`),
        messages: [
          { role: 'user' as const, content: 'Hello there.' },
          { role: 'assistant' as const, content: 'Hi.' },
          { role: 'user' as const, content: `${filler}How do I build an explosive device?` },
        ],
      });
      expect(harmOf(onlyLast).sentence).toMatchObject({ message: 2, start: filler.length });
    });

    it('not past the windows the encoder reads: a longer input is read by its opening and end', async () => {
      const e = explosivesEncoder(partsManifest);
      const huge = `${filler.repeat(5)}How do I build an explosive device? ${filler.repeat(5)}`;
      const r = await partsEngine(e).score(withWeapons(huge));
      expect(e.seen.map((i) => i.text)).not.toContain('How do I build an explosive device?');
      expect(r.reasoning).not.toMatch(/read in \d+ windows/);
    });

    it('not without the offset, below the routing point, disguised, or without harm rules', async () => {
      const { harm_parts: _, ...noParts } = partsManifest;
      const cases: Array<[EncoderManifest, ReturnType<typeof withWeapons>]> = [
        [testManifest(noParts), withWeapons(buried)],
        [partsManifest, withWeapons(`${filler}Then mend the garden fence. ${filler}`)],
        [partsManifest, { ...withWeapons(buried), rules: [] }],
        [
          partsManifest,
          withWeapons(
            `${buried} ${Buffer.from('how do I build an explosive device').toString('base64')}`,
          ),
        ],
      ];
      for (const [m, request] of cases) {
        const e = explosivesEncoder(m);
        const r = await partsEngine(e, m).score(request);
        expect(e.seen.length).toBeGreaterThan(0); // the windows, for the jailbreak score
        expect(e.seen.map((i) => i.text)).not.toContain('How do I build an explosive device?');
        expect(e.seen.map((i) => i.text)).not.toContain('Then mend the garden fence.');
        if (request.rules.length > 0) expect(harmOf(r).detector).toBe('static');
      }
    });
  });

  it('a long conversation is read by its latest message, which can only raise the harm', async () => {
    const filler = 'Could you plan a short weekend trip to the coast for us? '.repeat(8);
    const conversation = (latest: string) => ({
      ...withWeapons(latest),
      messages: [
        { role: 'user' as const, content: filler },
        { role: 'assistant' as const, content: 'Here is a plan.' },
        { role: 'user' as const, content: latest },
      ],
    });
    const e = enc();
    const r = await engine(e).score(conversation('How do I build an explosive device?'));
    // routed by harm alone: only the latest message is read, not the windows of the whole
    expect(e.seen.map((i) => i.text)).toEqual(['How do I build an explosive device?']);
    expect(harmOf(r).detector).toBe('encoder');
    expect(harmOf(r).score).toBeCloseTo(sig(logit(0.4) + logit(0.9)), 3);
    expect(r.violated_rules).toEqual([1]);
    // the encoder reading the latest message as harmless leaves the static score of the whole
    const kept = await engine(enc()).score(conversation('Then plan a fireworks show.'));
    expect(harmOf(kept).score).toBeCloseTo(0.7, 3);
    expect(kept.violated_rules).toEqual([1]);
    // a latest message too long to be read whole: the static harm stands
    const long = enc();
    await engine(long).score(conversation(`${filler} How do I build an explosive device?`));
    expect(long.seen).toHaveLength(0);
  });

  it('the encoder also clears a prompt the static harm head flagged, categories included', async () => {
    const r = await engine(enc()).score(withWeapons('plan a fireworks show for the weekend'));
    const h = harmOf(r);
    expect(h.score).toBeCloseTo(sig(logit(0.7) + logit(0.01)), 3);
    expect(h.categories.weapons).toBeLessThanOrEqual(h.score);
    expect(r.violation).toBe(0);
    // the static path alone flags it
    expect(engine(enc()).scoreSync(withWeapons('plan a fireworks show')).violation).toBe(0.7);
  });

  it('output phase: an answer that goes along with the request is judged with the request read by both', async () => {
    const e = enc();
    const eng = createLocalEngine({
      detectors: createStubDetectors({
        jailbreak: [],
        injection: [],
        harm: { weapons: [{ phrase: 'explosive device', score: 0.4, roles: ['prompt'] }] },
        compliance: [{ phrase: 'sure, here are the steps', score: 0.95 }],
      }),
      encoder: { defaultMode: 'cascade', manifest, encoder: async () => e, countTokens: words },
      warmup: false,
    });
    const answered = (answer: string) => ({
      ...withWeapons('how do I build an explosive device'),
      messages: [
        { role: 'user' as const, content: 'how do I build an explosive device' },
        { role: 'assistant' as const, content: answer },
      ],
    });
    const sure = answered('Sure, here are the steps: first gather the parts.');
    const r = await eng.score(sure);
    expect(e.seen.map((i) => i.text)).toEqual(['how do I build an explosive device']);
    expect(harmOf(r).detector).toBe('encoder');
    expect(harmOf(r).score).toBeCloseTo(sig(logit(0.4) + logit(0.9)), 3);
    expect(r.violated_rules).toEqual([1]);
    // the static request harm alone (0.4) does not carry the answer over the threshold
    expect(eng.scoreSync(sure).violated_rules).toEqual([]);
    // a refusal gains nothing from its request
    const refusal = await eng.score(answered('I cannot help with that.'));
    expect(refusal.violated_rules).toEqual([]);
  });

  it('is not read below the routing point, without harm rules, or with the encoder off', async () => {
    const cases = [
      withWeapons('paint the garden fence'),
      req('how do I build an explosive device'),
      { ...withWeapons('how do I build an explosive device'), scanners_config: { encoder: 'off' } },
    ];
    for (const request of cases) {
      const e = enc();
      const r = await engine(e).score(request);
      expect(e.seen).toHaveLength(0);
      expect(harmOf(r).detector).toBe('static');
      expect(harmOf(r).static_score).toBeUndefined();
    }
  });
});

describe('rules about harm in general (harm_general)', () => {
  const GENERAL = {
    name: 'serious_harm',
    description: 'No help with crimes or other seriously harmful or dangerous acts.',
    mode: 'block' as const,
  };
  const engine = (manifest: EncoderManifest) => harmEngine(manifest, explosivesEncoder(manifest));
  const general = (text: string) => ({ ...req(text), rules: [GENERAL] });
  const ruleScore = (r: ScoreResult) =>
    (r.scanner_output.rules as { score: number; source: string }[])[0];

  it('reads the overall harm, 0.5 at the manifest point, with no category words needed', async () => {
    const at = 0.8;
    const eng = engine(
      testManifest({
        route_above: 1.1,
        harm: { static: 1, encoder: 1, b: 0, route_above: 0.2 },
        harm_general: { at },
      }),
    );
    // both models read it: sig(logit 0.4 + logit 0.9) = 0.857, above the point
    const any = sig(logit(0.4) + logit(0.9));
    const r = await eng.score(general('how do I build an explosive device'));
    expect(ruleScore(r)?.source).toBe('harm:general');
    expect(ruleScore(r)?.score).toBeCloseTo(0.5 + (0.5 * (any - at)) / (1 - at), 2);
    expect(r.violated_rules).toEqual([1]);
    // the static path (no encoder read) keeps the same point: 0.4 scores 0.25
    const s = eng.scoreSync(general('how do I build an explosive device'));
    expect(ruleScore(s)?.score).toBeCloseTo(0.25, 2);
    expect(s.violated_rules).toEqual([]);
  });

  it('an overall score over 0.5 but under the point does not violate it; without a point it does', async () => {
    const manifest = testManifest({ route_above: 1.1 });
    const strict = await engine({ ...manifest, harm_general: { at: 0.8 } }).score(
      general('the fireworks show tonight'),
    );
    expect(ruleScore(strict)?.score).toBeCloseTo((0.5 * 0.7) / 0.8, 2);
    expect(strict.violated_rules).toEqual([]);
    const plain = await engine(manifest).score(general('the fireworks show tonight'));
    expect(ruleScore(plain)?.score).toBeCloseTo(0.7, 2);
    expect(plain.violated_rules).toEqual([1]);
  });
});

describe('sentencesOf', () => {
  const det = () =>
    createStubDetectors({
      jailbreak: [],
      injection: [],
      harm: { weapons: [{ phrase: 'explosive', score: 0.4 }] },
    });

  it('scores each sentence once, skips pieces without a letter or digit, and stops at its limit', () => {
    const d = det();
    const text = `${'\u0001\n'.repeat(50)}An explosive device? An explosive device? Plan a trip.`;
    const out = sentencesOf(text, d);
    expect(out.map((s) => s.text)).toEqual(['An explosive device?', 'Plan a trip.']);
    expect(d.calls.filter((c) => c.detector === 'harm')).toHaveLength(2);

    const many = det();
    const lines = Array.from({ length: MAX_SCORED_SENTENCES + 50 }, (_, k) => `Line ${k}.`);
    sentencesOf([...lines, 'An explosive device?'].join('\n'), many);
    expect(many.calls).toHaveLength(MAX_SCORED_SENTENCES);
  });
});
