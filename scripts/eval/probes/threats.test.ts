import { describe, expect, it } from 'vitest';
import { nearCopies } from '../jaccard.js';
import { readRows } from '../../multilingual/rows.js';
import { THREATS, VIOLENT_IDIOMS, threatRows } from '../../train/synthetic.js';

const probe = readRows('scripts/eval/probes/threats.jsonl');

describe('threats probe', () => {
  it('holds 30 threats and 30 benign contrast cases, all distinct', () => {
    expect(probe).toHaveLength(60);
    expect(new Set(probe.map((r) => r.text)).size).toBe(60);
    const count = (source: string, label: string) =>
      probe.filter((r) => r.source === source && r.label === label).length;
    expect(count('threat_at_you', 'harmful')).toBe(20);
    expect(count('threat_third_person', 'harmful')).toBe(10);
    expect(count('violent_idiom', 'benign')).toBe(20);
    expect(count('threat_help', 'benign')).toBe(10);
  });

  it("stays apart from the build's written threats and their contrast cases (word Jaccard under 0.5)", () => {
    const written = [...threatRows('train'), ...threatRows('val')].map((r) => r.text);
    expect(
      nearCopies(
        probe.map((r) => r.text),
        written,
      ),
    ).toEqual([]);
  });

  it('keeps the written threats of training apart from their val part: templates and slots', () => {
    for (const kind of Object.values(THREATS)) {
      expect(kind.val.filter((t) => kind.train.includes(t))).toEqual([]);
      expect(kind.slots.val.filter((x) => kind.slots.train.includes(x))).toEqual([]);
    }
    expect(VIOLENT_IDIOMS.val.filter((t) => VIOLENT_IDIOMS.train.includes(t))).toEqual([]);
    const train = new Set(threatRows('train').map((r) => r.text));
    expect(threatRows('val').filter((r) => train.has(r.text))).toEqual([]);
  });
});
