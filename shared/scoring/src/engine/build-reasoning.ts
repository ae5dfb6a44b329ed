/** The human-readable `reasoning` of a result. */
import type { RuleScore } from '../engine-types.js';
import type { JudgeApplied } from './apply-judge.js';
import { r3, r3Side, type LocalEvaluation } from './local-evaluation.js';

export function buildReasoning(
  ev: LocalEvaluation,
  rules: RuleScore[],
  violation: number,
  observeViolation: number | null,
  ipi: boolean,
  judgeInfo: JudgeApplied | null,
): string {
  const t = ev.thresholds;
  const lines: string[] = [];
  const side = ev.parts.phase === 'input' ? 'user input' : 'model output';
  lines.push(
    `Checked the ${side} against the ${ev.parts.phase === 'input' ? 'pre' : 'post'} thresholds (violation ${t.violation}, jailbreak ${t.jailbreak}); mode ${ev.profile.mode}.`,
  );
  const oc = ev.outputContext;
  if (oc && oc.score >= t.violation)
    lines.push(
      `The output answers a request scored harmful (${r3(oc.request)}) and goes along with it (compliance ${r3(oc.compliance)}${oc.reader === 'both' ? ', read by the encoder and the static detector' : ''}): harm in context ${r3(oc.score)}.`,
    );
  const own = ev.answerHarm;
  if (own && own.score >= t.violation)
    lines.push(
      `The output's own harm, read by the encoder and the static detector: ${r3(own.score)} (static detector ${r3(own.static)}).`,
    );
  else if (own && own.static >= t.violation)
    lines.push(
      `The output's own harm, read by the encoder and the static detector, is ${r3Side(own.score, t.violation)}, under the violation threshold; the static detector alone scored it ${r3(own.static)}.`,
    );
  const violated = rules.filter((r) => r.violated);
  for (const r of violated) {
    lines.push(
      `Rule ${r.rule} '${r.name}' (${r.mode}) violated: ${r.score} >= ${r.threshold}, from ${r.source}${r.evidence.length > 0 ? `; ${r.evidence.join('; ')}` : ''}.`,
    );
  }
  const jb = ev.builtins[0];
  if (jb) {
    lines.push(
      jb.violated
        ? `Jailbreak signal ${jb.score} reached its threshold ${jb.threshold}: counted as built-in rule 'jailbreak' (${jb.evidence.join('; ')}).`
        : `Jailbreak signal ${jb.score} stayed below ${jb.threshold}.`,
    );
  }
  for (const b of ev.builtins.slice(1)) {
    if (b.violated)
      lines.push(
        `Built-in rule '${b.name}' (${b.mode}) violated: ${b.score} (${b.evidence.join('; ')}).`,
      );
  }
  if (violated.length === 0 && rules.length > 0) {
    const top = [...rules].sort((a, b) => b.score - a.score)[0];
    if (top)
      lines.push(
        `No policy rule reached its threshold; the highest was rule ${top.rule} '${top.name}' at ${top.score} (${top.source}).`,
      );
  }
  for (const r of rules) {
    const plan = ev.rules.find((x) => x.index === r.rule)?.plan;
    if (r.confidence === 'low' && plan && plan.mapped.length === 0) {
      lines.push(
        `Rule ${r.rule} '${r.name}' maps to no detector; it was scored by lexical relevance only (low confidence).`,
      );
    } else if (r.confidence === 'low') {
      lines.push(`Rule ${r.rule} '${r.name}' was scored by ${r.source} only (low confidence).`);
    }
    for (const n of plan?.notes ?? []) lines.push(`Rule ${r.rule} '${r.name}': ${n}.`);
  }
  if (violation === 0 && observeViolation !== null)
    lines.push(
      `Only observe rules were violated: violation is 0 and observe_violation is ${observeViolation}.`,
    );
  if (ev.mutationEvidence.length > 0) {
    lines.push(
      `Disguised input (mutation): ${ev.mutationEvidence.map((e) => e.detail).join('; ')}. The normalised and decoded text was scored.`,
    );
  }
  if (ipi) {
    const worst = [...ev.indirect.sources].sort((a, b) => b.score - a.score)[0];
    lines.push(
      `Indirect prompt injection: ${worst?.origin ?? 'third-party content'} carries instructions aimed at the model (${ev.indirect.score} >= ${ev.ipiThreshold}).`,
    );
  }
  if (judgeInfo) lines.push(...judgeInfo.lines);
  else if (ev.request.reasoning_mode === 'off')
    lines.push('reasoning_mode off: local detectors only.');
  for (const n of ev.notes) lines.push(`Note: ${n}.`);
  return lines.join('\n');
}
