import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { harmLogit, loadMultilingualManifest, type MultilingualManifest } from './reader.js';
import { scriptGroup } from './script-group.js';

describe('scriptGroup', () => {
  it('names the script most letters are in', () => {
    expect(scriptGroup('怎样煮出粒粒分明的米饭？')).toBe('han');
    expect(scriptGroup('김치찌개를 맛있게 끓이는 방법을 알려주세요.')).toBe('hangul');
    expect(scriptGroup('كيف أتعلم البرمجة بلغة بايثون من الصفر؟')).toBe('arabic');
    expect(scriptGroup('Как приготовить борщ?')).toBe('cyrillic');
    expect(scriptGroup('घर पर दाल मखनी कैसे बनाएं?')).toBe('devanagari');
    expect(scriptGroup('Làm thế nào để nấu phở bò ngon tại nhà?')).toBe('latin');
    // Mixed: more Latin letters than Han characters.
    expect(scriptGroup('这个SQL语句: SELECT name FROM users WHERE age > 30')).toBe('latin');
  });

  it('reads Japanese with kanji as kana, and text without letters as other', () => {
    expect(scriptGroup('東京から京都まで新幹線でどのくらいかかりますか？')).toBe('kana');
    expect(scriptGroup('12345 !!! 678')).toBe('other');
    expect(scriptGroup('')).toBe('other');
  });
});

describe('harmLogit offsets', () => {
  const base = loadMultilingualManifest();
  const w = new Array<number>(384).fill(0);
  w[0] = 2;
  const e = new Float32Array(384);
  e[0] = 0.5;
  const with_ = (offsets?: Record<string, number>): MultilingualManifest => ({
    ...base,
    harm: { w, b: -0.25, ...(offsets ? { offsets } : {}) },
  });

  it("adds the text's script offset to the head's logit, `any` for a script without one", () => {
    expect(harmLogit(with_(), e, '怎样煮饭？')).toBeCloseTo(0.75, 6);
    const m = with_({ han: -1.5, any: 0.5 });
    expect(harmLogit(m, e, '怎样煮饭？')).toBeCloseTo(-0.75, 6);
    expect(harmLogit(m, e, 'Как приготовить борщ?')).toBeCloseTo(1.25, 6);
  });

  it('reads offsets from a manifest, and refuses a group it does not know', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ml-manifest-'));
    const write = (offsets: Record<string, number>) =>
      fs.writeFileSync(
        path.join(dir, 'multilingual.json'),
        JSON.stringify({ ...base, harm: { w, b: 0, offsets } }),
      );
    write({ han: -1, any: 0.25 });
    expect(loadMultilingualManifest(dir).harm?.offsets).toEqual({ han: -1, any: 0.25 });
    write({ klingon: 1 });
    expect(() => loadMultilingualManifest(dir)).toThrow(/offsets/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is null without a head', () => {
    const { harm: _unused, ...rest } = base;
    expect(harmLogit(rest, e, 'x')).toBeNull();
  });
});
