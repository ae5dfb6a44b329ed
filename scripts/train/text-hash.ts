/**
 * The hash build-dataset.ts splits rows by: FNV-1a over the text lower-cased with every run of
 * characters other than letters and digits made one space, so that a row keeps its split and its
 * identity through case and punctuation changes. Shared with clean-weak-labels.ts, whose list of
 * kept rows the build reads by this hash, as is which rows count as weakly labelled.
 */
export function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function norm(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The hash of a row's text as the build keys it. */
export const textHash = (text: string): number => fnv(norm(text));

/**
 * Whether a row's label is weak (a `weak_label:*` category: hh_rlhf_harmless_base's red-team
 * openers, every one labelled harmful): the rows GUARD_TRAIN_WEAK_KEEP filters.
 */
export const weaklyLabelled = (categories: readonly string[] | undefined): boolean =>
  (categories ?? []).some((c) => c.startsWith('weak_label:'));
