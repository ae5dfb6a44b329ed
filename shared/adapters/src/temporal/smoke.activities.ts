// Activities of the Temporal smoke workflow. Built by a factory over their dependencies, so a
// worker wires real ports in and the workflow imports only the type.
export interface SmokeDeps {
  /** Resolves a policy's display name; rejects for an unknown id. */
  policyName(policyId: string): Promise<string>;
}

export function createActivities(deps: SmokeDeps) {
  return {
    async describePolicy(policyId: string): Promise<string> {
      return `${policyId}: ${await deps.policyName(policyId)}`;
    },
  };
}

export type SmokeActivities = ReturnType<typeof createActivities>;
