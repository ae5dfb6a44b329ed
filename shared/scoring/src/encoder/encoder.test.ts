import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDefaultEngine } from '../default-engine.js';
import { testManifest } from '../testing/scripted-encoder.js';
import {
  calibratedAnswerHarm,
  calibratedCompliance,
  calibratedSentenceHarm,
  complyMeaningLogit,
  loadEncoderManifest,
} from './encoder.js';

/** A folder holding `encoder.json` with this text. */
function manifestDir(text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'encoder-manifest-'));
  writeFileSync(path.join(dir, 'encoder.json'), text);
  return dir;
}

describe('loadEncoderManifest', () => {
  it('reads the shipped manifest, and keeps fields it does not know', () => {
    const m = loadEncoderManifest();
    expect(m.heads).toContain('harm');
    expect(m.harm_topics?.lends).toContain('fraud');
    const dir = manifestDir(JSON.stringify({ ...testManifest(), later: { x: 1 } }));
    expect((loadEncoderManifest(dir) as unknown as { later: unknown }).later).toEqual({ x: 1 });
  });

  it('rejects a file of another shape, naming the file and the fields', () => {
    const bad = manifestDir(
      JSON.stringify({
        ...testManifest(),
        dims: 'many',
        harm_topics: { topics: { fraud: 'scams' }, lends: ['fraud', 'gossip'] },
      }),
    );
    expect(() => loadEncoderManifest(bad)).toThrow(
      /encoder\.json is not an encoder manifest: dims: .*harm_topics\.at: .*harm_topics\.lends\.1:/,
    );
    expect(() => loadEncoderManifest(manifestDir('{"model": '))).toThrow(
      /encoder\.json is not JSON/,
    );
  });

  it('rejects a compliance head by meaning that does not fit the embedding', () => {
    const bad = manifestDir(
      JSON.stringify({ ...testManifest(), comply_meaning: { w: [0.1, 0.2, 0.3], b: 0 } }),
    );
    expect(() => loadEncoderManifest(bad)).toThrow(
      /comply_meaning\.w: 3 weights for an embedding of 4 \(dims\)/,
    );
    // a weight for the head without the head: the blend's offset was fitted with it
    const orphan = manifestDir(
      JSON.stringify({
        ...testManifest(),
        comply: { static: 0.8, encoder: 0.5, meaning: 0.9, b: -0.7 },
      }),
    );
    expect(() => loadEncoderManifest(orphan)).toThrow(
      /comply\.meaning: a weight for comply_meaning/,
    );
  });

  it('rejects an offset for the harm of sentences without the harm point it shifts', () => {
    const orphan = manifestDir(JSON.stringify({ ...testManifest(), harm_parts: { b: -3 } }));
    expect(() => loadEncoderManifest(orphan)).toThrow(
      /harm_parts: an offset for the harm of sentences/,
    );
  });

  it('an engine with a malformed manifest fails when it is made, not on each request', () => {
    const bad = manifestDir(JSON.stringify({ ...testManifest(), jailbreak: { a: 1 } }));
    expect(() => createDefaultEngine({ encoder: { mode: 'cascade', dir: bad } })).toThrow(
      /jailbreak\.b:/,
    );
  });
});

describe('calibratedCompliance', () => {
  const out = (p: number) => ({ probs: [0, 0, 0, p], embedding: new Float32Array(4) });
  const lg = (p: number) => Math.log(p / (1 - p));
  const sig = (z: number) => 1 / (1 + Math.exp(-z));
  const manifest = testManifest({ comply: { static: 0.8, encoder: 0.5, b: -0.7 } });

  it('blends the static compliance and the comply head by the manifest weights', () => {
    expect(calibratedCompliance(manifest, 0.3, out(0.9))).toBeCloseTo(
      sig(0.8 * lg(0.3) + 0.5 * lg(0.9) - 0.7),
      9,
    );
    // the static score moves it too
    expect(calibratedCompliance(manifest, 0.9, out(0.9))).toBeGreaterThan(
      calibratedCompliance(manifest, 0.3, out(0.9)) as number,
    );
  });

  it('adds the head on the embedding by its weight, when the manifest has both', () => {
    const embedding = Float32Array.from([0.5, -0.5, 0.25, 0]);
    const withMeaning = testManifest({
      comply: { static: 0.8, encoder: 0.5, meaning: 0.9, b: -0.7 },
      comply_meaning: { w: [2, 1, 4, 3], b: -0.2 },
    });
    // head logit: 2 * 0.5 + 1 * -0.5 + 4 * 0.25 + 3 * 0 - 0.2 = 1.3
    expect(
      calibratedCompliance(withMeaning, 0.3, { probs: [0, 0, 0, 0.9], embedding }),
    ).toBeCloseTo(sig(0.8 * lg(0.3) + 0.5 * lg(0.9) + 0.9 * 1.3 - 0.7), 9);
    expect(complyMeaningLogit(withMeaning, { probs: [], embedding })).toBeCloseTo(1.3, 9);
    // a head without a weight in `comply` changes nothing; a weight without the head, no blend
    const headOnly = { ...withMeaning, comply: { static: 0.8, encoder: 0.5, b: -0.7 } };
    expect(calibratedCompliance(headOnly, 0.3, { probs: [0, 0, 0, 0.9], embedding })).toBeCloseTo(
      sig(0.8 * lg(0.3) + 0.5 * lg(0.9) - 0.7),
      9,
    );
    const weightOnly = testManifest({
      comply: { static: 0.8, encoder: 0.5, meaning: 0.9, b: -0.7 },
    });
    expect(calibratedCompliance(weightOnly, 0.3, out(0.9))).toBeNull();
  });

  it('is null without a comply point, a comply head or an output', () => {
    expect(calibratedCompliance(testManifest(), 0.3, out(0.9))).toBeNull();
    expect(
      calibratedCompliance(
        { ...manifest, heads: ['jailbreak', 'injection', 'harm'] },
        0.3,
        out(0.9),
      ),
    ).toBeNull();
    expect(calibratedCompliance(manifest, 0.3, undefined)).toBeNull();
  });
});

describe('calibratedSentenceHarm', () => {
  const harm = { static: 0.8, encoder: 0.5, b: 0.1, route_above: 0.06 };
  const out = (p: number) => ({ probs: [0, 0, p, 0], embedding: new Float32Array(4) });
  const lo = (p: number) => Math.log(p / (1 - p));

  it("blends both models as the harm point does, at the sentences' own offset", () => {
    const m = testManifest({ harm, harm_parts: { b: -3 } });
    expect(calibratedSentenceHarm(m, 0.4, out(0.9))).toBeCloseTo(
      1 / (1 + Math.exp(-(0.8 * lo(0.4) + 0.5 * lo(0.9) - 3))),
      9,
    );
  });

  it('is null without the offset, the harm point or a harm head', () => {
    expect(calibratedSentenceHarm(testManifest({ harm }), 0.4, out(0.9))).toBeNull();
    expect(
      calibratedSentenceHarm(testManifest({ harm_parts: { b: -3 } }), 0.4, out(0.9)),
    ).toBeNull();
    const noHead = testManifest({ harm, harm_parts: { b: -3 }, heads: ['jailbreak'] });
    expect(calibratedSentenceHarm(noHead, 0.4, out(0.9))).toBeNull();
  });
});

describe('calibratedAnswerHarm', () => {
  const point = { static: 0.7, encoder: 0.6, b: -0.8, route_above: 0.09 };
  const out = (p: number) => ({ probs: [0, 0, p, 0], embedding: new Float32Array(4) });
  const lo = (p: number) => Math.log(p / (1 - p));

  it("blends the static harm of the answer and the encoder's harm head by the manifest weights", () => {
    expect(calibratedAnswerHarm(testManifest({ answer_harm: point }), 0.2, out(0.95))).toBeCloseTo(
      1 / (1 + Math.exp(-(0.7 * lo(0.2) + 0.6 * lo(0.95) - 0.8))),
      9,
    );
  });

  it('is null without the point or a harm head; the shipped manifest has one', () => {
    expect(calibratedAnswerHarm(testManifest(), 0.2, out(0.95))).toBeNull();
    const noHead = testManifest({ answer_harm: point, heads: ['jailbreak'] });
    expect(calibratedAnswerHarm(noHead, 0.2, out(0.95))).toBeNull();
    expect(loadEncoderManifest().answer_harm?.route_above).toBeGreaterThan(0);
  });

  it('rejects a point without its route', () => {
    const dir = manifestDir(
      JSON.stringify({ ...testManifest(), answer_harm: { static: 1, encoder: 1, b: 0 } }),
    );
    expect(() => loadEncoderManifest(dir)).toThrow(/answer_harm/u);
  });
});
