import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyDiff, diffJson, revertDiff } from './json-diff.js';

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    tie('object'),
  ),
  object: fc.dictionary(fc.constantFrom('a', 'b', 'c/d', 'e~f', ''), tie('value'), { maxKeys: 4 }),
}));

describe('diffJson', () => {
  it('records per-key entries with JSON-pointer paths and both sides', () => {
    const before = { name: 'a', rules: { 'x/y': '1', gone: '2' } };
    const after = { name: 'b', rules: { 'x/y': '1', added: '3' } };
    expect(diffJson(before, after)).toEqual([
      { op: 'replace', path: '/name', old: 'a', new: 'b' },
      { op: 'remove', path: '/rules/gone', old: '2' },
      { op: 'add', path: '/rules/added', new: '3' },
    ]);
    expect(diffJson({ 'a~b': 1 }, { 'a~b': 2 })[0]?.path).toBe('/a~0b');
    expect(diffJson({ a: [1, 2] }, { a: [1, 2] })).toEqual([]);
  });

  it('revert(after, diff(before, after)) == before, and apply(before, diff) == after', () => {
    fc.assert(
      fc.property(json.object, json.object, (before, after) => {
        const d = diffJson(before, after);
        expect(revertDiff(after, d)).toEqual(before);
        expect(applyDiff(before, d)).toEqual(after);
      }),
      { numRuns: 500 },
    );
  });

  it('does not modify its inputs', () => {
    const after = { rules: { a: '1' } };
    revertDiff(after, [{ op: 'add', path: '/rules/a', new: '1' }]);
    expect(after).toEqual({ rules: { a: '1' } });
  });
});
