/** The API result (verdicts, scanner_output, reasoning) from the local evaluation and the judge's verdicts. */
import { HARM_CATEGORIES } from '../detectors.js';
import type { RuleScore, ScoreResult, ViolatedRuleDescription } from '../engine-types.js';
import type { JudgeApplied } from './apply-judge.js';
import { buildReasoning } from './build-reasoning.js';
import { r3, type LocalEvaluation } from './local-evaluation.js';

export function finalizeResult(ev: LocalEvaluation, judgeInfo: JudgeApplied | null): ScoreResult {
  const t = ev.thresholds;
  const ruleScores: RuleScore[] = ev.rules.map(({ index, plan, evaluation, mode }) => {
    const verdict = judgeInfo?.applied.get(String(index));
    const score = verdict ? verdict.score : evaluation.score;
    return {
      rule: index,
      name: plan.name,
      mode,
      score,
      threshold: t.violation,
      violated: score >= t.violation,
      confidence: evaluation.confidence,
      source: verdict
        ? `judge (local ${evaluation.source} ${evaluation.score})`
        : evaluation.source,
      evidence: verdict
        ? [
            ...evaluation.evidence,
            `judge: ${verdict.violated ? 'violated' : 'not violated'} (${verdict.score})`,
          ]
        : evaluation.evidence,
    };
  });
  const jbVerdict = judgeInfo?.applied.get('jailbreak');
  const jb = ev.builtins[0];
  if (jb && jbVerdict) {
    jb.score = jbVerdict.score;
    jb.violated = jb.score >= jb.threshold;
    jb.evidence.push(
      `judge: ${jbVerdict.violated ? 'jailbreak' : 'no jailbreak'} (${jbVerdict.score})`,
    );
  }

  const violatedPolicy = ruleScores.filter((r) => r.violated);
  const violatedBuiltins = ev.builtins.filter((b) => b.violated);
  const blockScores = [
    ...violatedPolicy.filter((r) => r.mode === 'block').map((r) => r.score),
    ...violatedBuiltins.filter((b) => b.mode === 'block').map((b) => b.score),
  ];
  const observeScores = [
    ...violatedPolicy.filter((r) => r.mode === 'observe').map((r) => r.score),
    ...violatedBuiltins.filter((b) => b.mode === 'observe').map((b) => b.score),
  ];
  const violation = blockScores.length > 0 ? Math.max(...blockScores) : 0;
  const observeViolation =
    blockScores.length === 0 && observeScores.length > 0 ? Math.max(...observeScores) : null;

  const descriptions: ViolatedRuleDescription[] = [
    ...violatedPolicy.map((r) => ({
      rule: r.rule,
      name: r.name,
      description: ev.rules.find((x) => x.index === r.rule)?.plan.description ?? '',
    })),
    ...violatedBuiltins.map((b) => ({ rule: 0, name: b.name, description: b.description })),
  ];
  const ipi = ev.indirect.score >= ev.ipiThreshold;
  const mutation = ev.mutationEvidence.length > 0;
  const alarm = blockScores.length > 0 || (jb?.violated ?? false) || ipi || mutation;

  const scannerOutput: Record<string, unknown> = {
    phase: ev.parts.phase,
    mode: ev.profile.mode,
    thresholds: { violation: t.violation, jailbreak: t.jailbreak, ipi: ev.ipiThreshold },
    jailbreak: {
      score: jb?.score ?? 0,
      local_score: r3(ev.jailbreak.score),
      detector: ev.jailbreakFrom,
      threshold: t.jailbreak,
      violated: jb?.violated ?? false,
      spans: ev.jailbreak.spans,
      text: ev.jailbreak.variant,
    },
    injection: {
      score: r3(ev.injection.score),
      spans: ev.injection.spans,
      text: ev.injection.variant,
    },
    indirect_injection: {
      score: ev.indirect.score,
      threshold: ev.ipiThreshold,
      detected: ipi,
      sources: ev.indirect.sources,
    },
    harm: ev.harm
      ? {
          score: r3(ev.harm.any.score),
          detector: ev.harmFrom,
          ...(ev.harmFrom !== 'static' ? { static_score: r3(ev.staticHarm) } : {}),
          ...(ev.multilingualHarm !== undefined
            ? { multilingual_score: r3(ev.multilingualHarm) }
            : {}),
          ...(ev.harmTopic
            ? { topic: { category: ev.harmTopic.category, cosine: r3(ev.harmTopic.cosine) } }
            : {}),
          ...(ev.harmSentence
            ? { sentence: { ...ev.harmSentence, score: r3(ev.harmSentence.score) } }
            : {}),
          ...(ev.outputContext
            ? {
                context: {
                  request: r3(ev.outputContext.request),
                  compliance: r3(ev.outputContext.compliance),
                  score: r3(ev.outputContext.score),
                  reader: ev.outputContext.reader,
                },
              }
            : {}),
          ...(ev.answerHarm
            ? {
                answer: {
                  score: r3(ev.answerHarm.score),
                  static_score: r3(ev.answerHarm.static),
                  reader: 'both',
                },
              }
            : {}),
          categories: Object.fromEntries(
            HARM_CATEGORIES.map((c) => [c, r3(ev.harm?.categories[c].score ?? 0)]),
          ),
        }
      : { score: 0, categories: {} },
    mutation: { detected: mutation, evidence: ev.mutationEvidence },
    ...ev.scannerOutput,
    rules: ruleScores,
    builtin_rules: ev.builtins.map((b) => ({
      name: b.name,
      mode: b.mode,
      score: b.score,
      threshold: b.threshold,
      violated: b.violated,
    })),
  };
  if (judgeInfo) scannerOutput.judge = judgeInfo.summary;
  if (ev.notes.length > 0) scannerOutput.notes = ev.notes;

  return {
    violation: r3(violation),
    observe_violation: observeViolation === null ? null : r3(observeViolation),
    violated_rules: violatedPolicy.map((r) => r.rule),
    violated_rule_descriptions: descriptions,
    ipi,
    mutation,
    scanner_output: scannerOutput,
    reasoning: buildReasoning(ev, ruleScores, violation, observeViolation, ipi, judgeInfo),
    input_tokens: ev.inputTokens,
    output_tokens: judgeInfo?.outputTokens ?? 0,
    error: false,
    error_message: null,
    alarm,
    phase: ev.parts.phase,
  };
}
