import type { Response } from 'express';

/** Resolves when the socket can take more (`drain`), or when the client has gone (`close`). */
export function writable(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Writes `chunk` and waits while the socket's buffer is full; nothing once the response is over. */
export async function write(res: Response, chunk: string): Promise<void> {
  if (!chunk || res.writableEnded || res.destroyed) return;
  if (!res.write(chunk)) await writable(res);
}
