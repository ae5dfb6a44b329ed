/** A message as the scoring core and the monitor API take it (the fields these generators use). */
export interface BenchMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_call_id?: string;
  name?: string;
  tool_calls?: Array<
    | { id: string; name: string; arguments: string }
    | { id: string; type: 'function'; function: { name: string; arguments: string } }
  >;
}
export function agentCalls(
  seed: number,
  steps: number,
  label?: string,
  wire?: boolean,
): BenchMessage[][];
export function chatCalls(seed: number, turns: number, label?: string): BenchMessage[][];
export function completionCalls(seed: number, count: number, label?: string): BenchMessage[][];
