export const SENTENCES: readonly string[];
export function ordinaryText(next: () => number, chars: number): string;
export function seeded(seed: number): () => number;
