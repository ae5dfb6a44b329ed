import { describe, expect, it } from 'vitest';
import { nearCopies } from '../jaccard.js';
import { readRows } from '../../multilingual/rows.js';
import {
  BENIGN_ROLEPLAY,
  BENIGN_TOPICS,
  HARM_LOOKALIKES,
  SAFE_LOOKING,
  SAFETY_QUESTIONS,
  lookalikeCombos,
  type Family,
  safetyQuestions,
} from '../../train/synthetic.js';

const probe = readRows('scripts/eval/probes/edgy-benign.jsonl');

describe('edgy benign probe (security, medical, fiction and history questions)', () => {
  it('holds 16 benign prompts of each kind, all distinct', () => {
    expect(probe).toHaveLength(64);
    expect(new Set(probe.map((r) => r.text)).size).toBe(64);
    for (const r of probe) {
      expect(r.label).toBe('benign');
      expect(r.role).toBe('prompt');
    }
    const kinds = ['edgy_security', 'edgy_medical', 'edgy_fiction', 'edgy_history'];
    for (const k of kinds) expect(probe.filter((r) => r.source === k)).toHaveLength(16);
  });

  it("stays apart from the build's hand-written benign families (word Jaccard under 0.5)", () => {
    const family = (f: Family) => [...f.train, ...f.val];
    const written = [
      ...family(HARM_LOOKALIKES),
      ...family(SAFE_LOOKING),
      ...family(BENIGN_TOPICS),
      ...family(BENIGN_ROLEPLAY),
      ...lookalikeCombos(),
      ...safetyQuestions('train'),
      ...safetyQuestions('val'),
    ];
    expect(
      nearCopies(
        probe.map((r) => r.text),
        written,
      ),
    ).toEqual([]);
  });

  it('keeps the safety questions of training apart from their val part: templates and slots', () => {
    for (const kind of Object.values(SAFETY_QUESTIONS)) {
      expect(kind.val.filter((t) => kind.train.includes(t))).toEqual([]);
      expect(kind.slots.val.filter((x) => kind.slots.train.includes(x))).toEqual([]);
    }
    const train = new Set(safetyQuestions('train'));
    expect(safetyQuestions('val').filter((q) => train.has(q))).toEqual([]);
  });
});
