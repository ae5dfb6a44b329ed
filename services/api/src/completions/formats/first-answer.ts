/**
 * The provider's body with only its first entry under `key` (chat `choices`, Gemini
 * `candidates`): only that one was checked, so a provider that sends more than asked for never
 * gets the others past the guard.
 */
export function firstAnswerOnly(
  raw: Record<string, unknown>,
  key: string,
): Record<string, unknown> {
  const list = raw[key];
  return Array.isArray(list) && list.length > 1 ? { ...raw, [key]: list.slice(0, 1) } : raw;
}
