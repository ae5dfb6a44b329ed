/**
 * `Detectors` backed by the committed detector network. One forward pass scores every head, and
 * the engine usually asks jailbreak, injection and harm about the same text, so the last few
 * passes are memoised by (role, text).
 */
import {
  HARM_CATEGORIES,
  type DetectorOutput,
  type Detectors,
  type HarmCategory,
  type HarmOutput,
  type Span,
  type TextRole,
} from '../detectors.js';
import { MlModel, type SegmentScores } from './ml-model.js';

// The engine asks jailbreak, injection and harm in turn about the canonical text and each of up
// to 8 decoded variants: with fewer than 9 entries every text of a payload-heavy input was scored
// three times over (and one text per variant is ~1 ms per KB).
const MEMO_SIZE = 12;

export interface MlDetectorsOptions {
  /** Directory holding detectors.json/.bin, vocab.txt and static-embeddings.*; defaults to the committed models. */
  modelDir?: string;
  /** An already-loaded model (shared between detector instances). */
  model?: MlModel;
}

const EMPTY: DetectorOutput = { score: 0, spans: [] };

export class MlDetectors implements Detectors {
  readonly model: MlModel;
  /** Most recent passes, newest last; compared by (role, text) without hashing the text. */
  private readonly memo: { role: TextRole; text: string; scores: SegmentScores }[] = [];
  private readonly jb: number;
  private readonly inj: number;
  private readonly harmHead: number;
  private readonly catHeads: number[];
  private readonly complyHead: number;

  constructor(model: MlModel) {
    this.model = model;
    this.jb = model.headIndex('jailbreak');
    this.inj = model.headIndex('injection');
    this.harmHead = model.headIndex('harm');
    this.catHeads = HARM_CATEGORIES.map((c) => model.headIndex(c));
    this.complyHead = model.heads.indexOf('comply');
  }

  jailbreak(text: string): DetectorOutput {
    return this.output(text, 'prompt', this.jb, 'jailbreak');
  }

  injection(text: string, role: TextRole): DetectorOutput {
    return this.output(
      text,
      role,
      this.inj,
      role === 'document' ? 'indirect injection' : 'prompt injection',
    );
  }

  harm(text: string, role: TextRole): HarmOutput {
    const any = this.output(text, role, this.harmHead, 'harm');
    const categories = {} as Record<HarmCategory, DetectorOutput>;
    HARM_CATEGORIES.forEach((c, i) => {
      // P(harmful in c) cannot exceed P(harmful): the category heads are trained on few labelled
      // rows and drift on unfamiliar text (e.g. other languages), the `any` head on many more.
      const out = this.output(text, role, this.catHeads[i] ?? 0, c);
      categories[c] = {
        score: Math.min(out.score, any.score),
        spans: any.spans.length > 0 ? out.spans : [],
      };
    });
    return { any, categories };
  }

  /** The `comply` head on a response (models trained before it existed answer 0). */
  compliance(response: string): DetectorOutput {
    if (this.complyHead < 0) return EMPTY;
    return this.output(response, 'response', this.complyHead, 'complies with the request');
  }

  private output(text: string, role: TextRole, head: number, label: string): DetectorOutput {
    if (!/\S/u.test(text)) return EMPTY;
    const s = this.scores(text, role);
    const H = this.model.heads.length;
    const thr = this.model.threshold(head, role);
    const spans: Span[] = [];
    s.segments.forEach((seg, i) => {
      if (this.model.calibrate(head, s.logits[i * H + head] ?? -Infinity, role) >= thr)
        spans.push({ start: seg.start, end: seg.end, label });
    });
    return { score: s.probs[head] ?? 0, spans };
  }

  private scores(text: string, role: TextRole): SegmentScores {
    for (let i = this.memo.length - 1; i >= 0; i--) {
      const m = this.memo[i];
      if (m && m.role === role && m.text === text) return m.scores;
    }
    // Every segment is scored, however long the text: a text's score is the highest of its
    // segments', so the cost is linear in its length (bounded by the request limits and the
    // scoring deadline), and nothing in the middle of a long input goes unread.
    const s = this.model.score(text, role);
    if (this.memo.length >= MEMO_SIZE) this.memo.shift();
    this.memo.push({ role, text, scores: s });
    return s;
  }
}

let shared: MlModel | undefined;

/** Learned detectors over the committed weights; the model is loaded once per process. */
export function createMlDetectors(options: MlDetectorsOptions = {}): MlDetectors {
  if (options.model) return new MlDetectors(options.model);
  if (options.modelDir) return new MlDetectors(MlModel.load(options.modelDir));
  shared ??= MlModel.load();
  return new MlDetectors(shared);
}
