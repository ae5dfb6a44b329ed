import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type Logger, type WorkflowBundle } from '@temporalio/worker';

/**
 * jobs.workflow next to this module: its TypeScript source when this runs from source (tests,
 * `tsx`), the compiled file in dist otherwise.
 */
export const JOB_WORKFLOWS_PATH = fileURLToPath(
  new URL(`./jobs.workflow${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);

/**
 * The job workflows bundled for the worker's sandbox (webpack, a few seconds). From source, the
 * workspace packages resolve under their `source` condition, as everywhere else from source, so
 * the bundle holds the orchestration code this process runs and not a stale dist/.
 */
export async function bundleJobWorkflows(
  options: { workflowsPath?: string; logger?: Logger } = {},
): Promise<WorkflowBundle> {
  const workflowsPath = options.workflowsPath ?? JOB_WORKFLOWS_PATH;
  const fromSource = workflowsPath.endsWith('.ts');
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    ...(options.logger ? { logger: options.logger } : {}),
    webpackConfigHook: (config) =>
      fromSource
        ? { ...config, resolve: { ...config.resolve, conditionNames: ['source', '...'] } }
        : config,
  });
  return { code };
}
