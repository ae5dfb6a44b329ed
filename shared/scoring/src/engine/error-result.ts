import type { ScoreRequest, ScoreResult } from '../engine-types.js';

/** The phase a request is checked in: explicit, else output when the assistant spoke last. */
export function phaseOf(request: ScoreRequest): 'input' | 'output' {
  return request.phase ?? (request.messages.at(-1)?.role === 'assistant' ? 'output' : 'input');
}

/** The result of a scoring that did not complete: no signal, `error: true`; never a clean pass. */
export function errorScoreResult(request: ScoreRequest, error: unknown): ScoreResult {
  const message = error instanceof Error ? error.message : String(error);
  return {
    violation: 0,
    observe_violation: null,
    violated_rules: [],
    violated_rule_descriptions: [],
    ipi: false,
    mutation: false,
    scanner_output: {},
    reasoning: `Scoring did not complete: ${message}. This is not a clean pass.`,
    input_tokens: 0,
    output_tokens: 0,
    error: true,
    error_message: message,
    alarm: false,
    phase: phaseOf(request),
  };
}
