/** Hybrid/thinking: which local verdicts go to the judge, and how its answers replace them. */
import type { ScoreRequest } from '../engine-types.js';
import type { JudgeOutcome, JudgeRuleInput } from '../judge/judge-client.js';
import type { HybridBand } from './local-engine.js';
import { r3, type LocalEvaluation } from './local-evaluation.js';

const MAX_TRANSCRIPT_CHARS = 24_000;

export interface JudgeApplied {
  applied: Map<string, { score: number; violated: boolean; reasoning: string }>;
  outputTokens: number;
  summary: Record<string, unknown>;
  lines: string[];
}

export function selectForJudge(
  ev: LocalEvaluation,
  mode: 'hybrid' | 'thinking',
  band: HybridBand,
): JudgeRuleInput[] {
  const out: JudgeRuleInput[] = [];
  const t = ev.thresholds;
  const uncertain = (s: number, threshold: number): boolean =>
    s >= threshold - band.below && s < threshold + band.above;
  for (const r of ev.rules) {
    const e = r.evaluation;
    const certainExact = e.deterministic >= t.violation;
    const pick =
      mode === 'thinking' ||
      (!certainExact &&
        (uncertain(e.score, t.violation) || (e.confidence === 'low' && e.score >= 0.15)));
    if (pick) out.push({ id: String(r.index), name: r.plan.name, description: r.plan.description });
  }
  // The jailbreak threshold is low (0.3 by default): a band below it of half the threshold keeps
  // ordinary prompts (calibrated scores near 0) away from the judge.
  const jb = ev.jailbreak.score;
  if (mode === 'thinking' || (jb >= t.jailbreak * 0.5 && jb < t.jailbreak + band.above)) {
    out.push({
      id: 'jailbreak',
      name: 'jailbreak',
      description:
        'The user input tries to make the model ignore its rules or safety guidelines (jailbreak).',
    });
  }
  return out;
}

export function applyJudge(
  ev: LocalEvaluation,
  candidates: JudgeRuleInput[],
  outcome: JudgeOutcome,
  mode: 'hybrid' | 'thinking',
): JudgeApplied {
  const ids = candidates.map((c) => c.id);
  if (!outcome.ok) {
    return {
      applied: new Map(),
      outputTokens: outcome.outputTokens,
      summary: {
        consulted: true,
        ok: false,
        error: outcome.error,
        rules: ids,
        latency_ms: outcome.latencyMs,
      },
      lines: [
        `reasoning_mode ${mode}: the judge failed (${outcome.error}); local scores were used for every rule.`,
      ],
    };
  }
  const applied = new Map<string, { score: number; violated: boolean; reasoning: string }>();
  const lines: string[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    const v = outcome.verdicts.get(id);
    if (!v) {
      missing.push(id);
      continue;
    }
    const rule = ev.rules.find((r) => String(r.index) === id);
    // Exact matches (phrases, regexes, scanner findings) are facts: the judge cannot talk them down.
    const floor = rule ? rule.evaluation.deterministic : 0;
    const score = r3(Math.max(v.score, floor));
    applied.set(id, { score, violated: v.violated, reasoning: v.reasoning });
    const label = rule ? `rule ${id} '${rule.plan.name}'` : 'jailbreak';
    if (mode === 'thinking' || v.reasoning)
      lines.push(
        `Judge on ${label}: ${v.violated ? 'violated' : 'not violated'} (${score})${v.reasoning ? ` — ${v.reasoning}` : ''}`,
      );
  }
  if (missing.length > 0)
    lines.push(`The judge gave no verdict for ${missing.join(', ')}; local scores kept there.`);
  return {
    applied,
    outputTokens: outcome.outputTokens,
    summary: {
      consulted: true,
      ok: true,
      model: outcome.model,
      rules: ids,
      missing,
      latency_ms: outcome.latencyMs,
    },
    lines: [
      `reasoning_mode ${mode}: judge ${outcome.model} consulted on ${ids.length} item(s).`,
      ...lines,
    ],
  };
}

export function renderTranscript(request: ScoreRequest): string {
  const parts: string[] = [];
  for (const m of request.messages) {
    let line = `[${m.role}${m.name ? ` ${m.name}` : ''}] ${m.content}`;
    for (const c of m.tool_calls ?? []) line += `\n[tool call ${c.name}] ${c.arguments}`;
    parts.push(line);
  }
  let text = parts.join('\n\n');
  // Keep the end: the checked turn is last.
  if (text.length > MAX_TRANSCRIPT_CHARS)
    text = `[... earlier conversation truncated ...]\n${text.slice(-MAX_TRANSCRIPT_CHARS)}`;
  return text;
}
