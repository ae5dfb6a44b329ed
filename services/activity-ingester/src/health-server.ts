// The probe server is shared by the roles without an HTTP API of their own.
export {
  startHealthServer,
  type HealthProbe,
  type RunningHealthServer,
} from '@guard/platform/health-server';
