/**
 * What the models run by onnxruntime-node share: a checked JSON manifest beside the weights, and
 * one session on one intra-op thread (the callers are worker threads, one model each).
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';

/**
 * The JSON file `file` read with `schema`: a file of another shape is an error naming the file and
 * its first fields, when the engine is made, rather than a model that fails on every request.
 */
export function readManifest<T>(file: string, schema: z.ZodType<T>, what: string): T {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    if (e instanceof SyntaxError) throw new Error(`${file} is not JSON: ${e.message}`);
    throw e;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `${file} is not ${what}: ${parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ')}`,
    );
  return parsed.data;
}

/**
 * onnxruntime-node and a session of the model in `file`, on one intra-op thread. Imported here,
 * not at load: the native library (~45 MB) is only mapped by the threads that run a model.
 */
export async function createSession(file: string) {
  const ort = await import('onnxruntime-node');
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  return { ort, session };
}
