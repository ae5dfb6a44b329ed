/** An encoder for tests: answers each item with `answer(item)` and records what it was asked. */
import type { Encoder, EncoderItem, EncoderManifest, EncoderOutput } from '../encoder/encoder.js';

/** A manifest with the shipped model's shape and neutral calibration (`jailbreak`: the raw head). */
export function testManifest(over: Partial<EncoderManifest> = {}): EncoderManifest {
  return {
    model: 'model.int8.onnx',
    heads: ['jailbreak', 'injection', 'harm', 'comply'],
    dims: 4,
    head_tokens: 96,
    tail_tokens: 30,
    jailbreak: { a: 1, b: 0 },
    route_above: 0.1,
    ...over,
  };
}

export type ScriptedEncoder = Encoder & { seen: EncoderItem[] };

export function scriptedEncoder(
  manifest: EncoderManifest,
  answer: (item: EncoderItem) => EncoderOutput,
  fail = false,
): ScriptedEncoder {
  const seen: EncoderItem[] = [];
  return {
    manifest,
    seen,
    encode: async (items) => {
      if (fail) throw new Error('model file missing');
      seen.push(...items);
      return items.map(answer);
    },
    close: async () => undefined,
  };
}
