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
