/**
 * Sources held out of training entirely, whatever the run: their rows only ever go to the
 * validation split (build-dataset.ts), and a leave-one-source-out fold of one of them is the
 * reference model itself (scripts/eval/loso.ts).
 */
export const VAL_SOURCES: ReadonlySet<string> = new Set([
  'gptfuzz_prompts',
  'deepset_prompt_injections',
  'strongreject',
  'harmbench',
  'advbench',
  'convabuse',
  'hwu64',
  'nq_open',
]);

/**
 * The held-out benign pool of leave-one-source-out (scripts/eval/loso.ts), excluded from every
 * fold's training: real search queries, grade-school maths, role-play requests (the jailbreak
 * head's hard negatives) and CoCoNot's benign prompts that look unsafe (the harm head's hard
 * negatives). Only their benign rows are scored.
 */
export const LOSO_POOL: readonly string[] = ['nq_open', 'gsm8k', 'gpteacher_roleplay', 'coconot'];
