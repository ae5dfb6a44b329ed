/** Whether an error is the rejection of an aborted call (fetch, undici and Node name it alike). */
export function isAbortError(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err.name === 'AbortError' || (err as { code?: unknown }).code === 'ABORT_ERR')
  );
}
