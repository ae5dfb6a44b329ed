/**
 * Opaque tokens (list and export cursors): a JSON value, base64url-encoded. Opaque means only
 * that clients must not rely on the inside; each reader still checks what it decodes.
 */
export function encodeOpaque(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The value inside a token, or undefined when it is not one. */
export function decodeOpaque(token: string): unknown {
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
