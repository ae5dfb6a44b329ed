/** The scanners' report (`scanner_output`) and the built-in rules of those whose action is block/observe. */
import type { ScoreRequest } from '../engine-types.js';
import { redactText } from '../scanners/pii-scanner.js';
import { SAFE_REGEX_LIMITS, type RegexBudget, type RegexMatch } from '../scanners/safe-regex.js';
import type { ScannerAction } from '../scanners/scanners-config.js';
import { maxConfidence } from '../router/score-rule.js';
import type { RulePlan } from '../router/rule-router.js';
import type { CompiledPolicy } from './compiled-policy.js';
import type { ConversationParts } from './conversation.js';
import { r3, type BuiltinRule } from './local-evaluation.js';
import type { ScannerFindings } from './scanner-findings.js';
import type { Analysis } from './text-analysis.js';

/**
 * Findings per message index, built once: filtering the whole list for every message was
 * quadratic in long conversations (thousands of messages, each with a finding).
 */
function groupByMessage<T extends { message: number }>(found: readonly T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const f of found) {
    const list = out.get(f.message);
    if (list) list.push(f);
    else out.set(f.message, [f]);
  }
  return out;
}

interface Finding {
  type: string;
  subtype?: string;
  message: number;
  start: number;
  end: number;
  confidence: number;
}

/** The PII and secrets scanners report their findings alike. */
function findingsReport(found: readonly Finding[]): Record<string, unknown> {
  return {
    count: found.length,
    findings: found.map((f) => ({
      type: f.type,
      subtype: f.subtype,
      message: f.message,
      start: f.start,
      end: f.end,
      confidence: f.confidence,
    })),
  };
}

export interface ScannerBuiltinsInput {
  request: ScoreRequest;
  parts: ConversationParts;
  policy: CompiledPolicy;
  rules: ReadonlyArray<{ plan: RulePlan }>;
  findings: ScannerFindings;
  checkedAn: Analysis;
  violationThreshold: number;
  regexBudget: RegexBudget;
}

/** Fills `scannerOutput`, appends to `builtins` and `notes`. */
export function runScannerBuiltins(
  {
    request,
    parts,
    policy,
    rules,
    findings,
    checkedAn,
    violationThreshold,
    regexBudget,
  }: ScannerBuiltinsInput,
  scannerOutput: Record<string, unknown>,
  builtins: BuiltinRule[],
  notes: string[],
): void {
  const input = parts.phase === 'input';
  const { piiCfg, secretsCfg, piiFindings, secretFindings, leakage } = findings;
  const { config } = policy;
  const addBuiltin = (
    name: string,
    action: ScannerAction,
    score: number,
    evidence: string,
  ): void => {
    if (action === 'report') return;
    builtins.push({
      name,
      description: `Built-in ${name.replace(/_/g, ' ')} scanner (scanners_config).`,
      mode: action,
      score: r3(score),
      threshold: violationThreshold,
      violated: score >= violationThreshold,
      evidence: [evidence],
    });
  };

  if (piiCfg?.enabled || rules.some((r) => r.plan.pii)) {
    const found = piiCfg?.enabled === false ? [] : piiFindings();
    const out = findingsReport(found);
    if (piiCfg?.redact) {
      const perMessage = groupByMessage(found);
      out.redacted_messages = parts.checked
        .map((m) => ({
          index: m.index,
          content: redactText(m.text, perMessage.get(m.index) ?? [], piiCfg.redaction),
        }))
        .filter((m, k) => m.content !== parts.checked[k]?.text);
      if (request.messages.length === 1 && parts.checked.length === 1)
        out.redacted_text = redactText(
          parts.checked[0]?.text ?? '',
          found.filter((f) => f.message >= 0),
          piiCfg.redaction,
        );
    }
    scannerOutput.pii = out;
    if (piiCfg?.enabled && found.length > 0)
      addBuiltin(
        'pii',
        piiCfg.action,
        maxConfidence(found),
        `PII scanner: ${found.length} finding(s)`,
      );
  }
  if (secretsCfg?.enabled || rules.some((r) => r.plan.secrets)) {
    const found = secretsCfg?.enabled === false ? [] : secretFindings();
    const out = findingsReport(found);
    if (secretsCfg?.redact) {
      const perMessage = groupByMessage(found);
      out.redacted_messages = parts.checked
        .map((m) => ({
          index: m.index,
          content: redactText(
            m.text,
            (perMessage.get(m.index) ?? []).map((f) => ({ ...f, type: 'secret' })),
          ),
        }))
        .filter((m, k) => m.content !== parts.checked[k]?.text);
    }
    scannerOutput.secrets = out;
    if (secretsCfg?.enabled && found.length > 0)
      addBuiltin(
        'secrets',
        secretsCfg.action,
        maxConfidence(found),
        `secrets scanner: ${found.length} finding(s)`,
      );
  }
  if (config.system_prompt?.enabled || rules.some((r) => r.plan.leakage)) {
    const l = leakage();
    scannerOutput.system_prompt = l
      ? { checked: true, score: l.score, coverage: l.coverage, matched_words: l.matchedWords }
      : {
          checked: false,
          reason: input ? 'input phase: leakage is checked on output' : 'no system prompt known',
        };
    if (config.system_prompt?.enabled && l)
      addBuiltin(
        'system_prompt_leak',
        config.system_prompt.action,
        l.score,
        `output reproduces ${Math.round(l.coverage * 100)}% of the system prompt`,
      );
  }
  const matcher = policy.keywords;
  if (matcher && config.keywords) {
    const kc = config.keywords;
    const hits = checkedAn.views.flatMap((v, k) =>
      matcher.find(v, 50).map((h) => ({
        keyword: kc.keywords[h.keyword],
        fuzzy: h.fuzzy,
        variant: k === 0 ? 'text' : (checkedAn.variantKinds[k - 1] ?? 'variant'),
        start: h.start,
        end: h.end,
      })),
    );
    scannerOutput.keywords = { count: hits.length, matches: hits };
    if (hits.length > 0)
      addBuiltin(
        'keywords',
        kc.action,
        hits.some((h) => !h.fuzzy) ? 0.95 : 0.75,
        `keywords scanner: ${hits.length} match(es)`,
      );
  }
  const compiled = policy.regexes;
  if (compiled && config.regex) {
    const rc = config.regex;
    const texts = [...parts.checked.map((m) => m.text), ...checkedAn.views.map((v) => v.text)];
    const matches: Array<{ pattern: string; start: number; end: number; message: number }> = [];
    for (const { label, re } of compiled) {
      // The canonical text is usually the message itself: scan each distinct text once.
      const scanned = new Map<string, RegexMatch[]>();
      texts.forEach((t, k) => {
        if (matches.length >= 100) return;
        let found = scanned.get(t);
        if (!found) {
          found = re.findAll(t, 20, regexBudget);
          scanned.set(t, found);
        }
        for (const m of found)
          matches.push({
            pattern: label,
            start: m.start,
            end: m.end,
            message: k < parts.checked.length ? (parts.checked[k]?.index ?? -1) : -1,
          });
      });
    }
    // The same span in the original and the normalised text is one match.
    const unique = new Map(matches.map((m) => [`${m.pattern}:${m.start}:${m.end}`, m] as const));
    scannerOutput.regex = { count: unique.size, matches: [...unique.values()] };
    if (unique.size > 0)
      addBuiltin('regex', rc.action, 0.95, `regex scanner: ${unique.size} match(es)`);
  }
  if (regexBudget.steps <= 0)
    notes.push(
      `regex matching stopped at its budget of ${SAFE_REGEX_LIMITS.requestStepBudget} steps per request; later patterns or texts were not fully searched`,
    );
}
