import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  IMAGE,
  REPO,
  ROLE_ENV,
  SECRET_VARS,
  STANDALONE_ENV,
  composeEnv,
  composeRawEnv,
  defaultOf,
  entryPointRoles,
  isAllowedExtra,
  loadCompose,
  renderK8s,
  requiredKeys,
  ensureTools,
} from './support.js';

// docker-compose.yml (engines, Jaeger, every role) and docker-compose.standalone.yml, checked
// against what each role reads. Docker is not needed: nothing is started.

const compose = loadCompose('docker-compose.yml');
const standalone = loadCompose('docker-compose.standalone.yml');
const services = compose.services as Record<string, any>;

const ENGINES: Record<string, RegExp> = {
  redis: /^redis:7(\.|$)/,
  kafka: /^apache\/kafka:3\.9(\.|$)/,
  cassandra: /^cassandra:(4\.1|5)(\.|$)/,
  temporal: /^temporalio\/(temporal|auto-setup):/,
  jaeger: /^jaegertracing\/all-in-one:/,
};

function roleService(role: string): [string, any] {
  const found = Object.entries(services).filter(([, s]) => composeEnv(s.environment).ROLE === role);
  expect(found, `one service runs ROLE=${role}`).toHaveLength(1);
  return found[0]!;
}

/** The port a `node -e "fetch('http://127.0.0.1:PORT/...')"` health check asks. */
function healthcheckPort(s: any): number | undefined {
  const test = [s.healthcheck?.test ?? []].flat().join(' ');
  const m = /127\.0\.0\.1:(\d+)\/readyz/.exec(test);
  return m ? Number(m[1]) : undefined;
}

function checkBuild(s: any) {
  expect(s.image).toBe(IMAGE);
  expect(s.build).toMatchObject({ context: '.', dockerfile: 'infra/docker/Dockerfile' });
}

function checkLockedDown(s: any) {
  expect(s.read_only).toBe(true);
  expect(s.tmpfs).toContain('/tmp');
  expect(s.cap_drop).toEqual(['ALL']);
}

describe('docker-compose.yml', () => {
  it('runs the engines in the versions the project uses, and Jaeger', () => {
    for (const [name, image] of Object.entries(ENGINES)) {
      expect(services[name]?.image, name).toMatch(image);
    }
  });

  it('has a service for every role of the entry point', () => {
    const roles = entryPointRoles();
    expect(roles.sort()).toEqual(Object.keys(ROLE_ENV).sort());
    for (const role of roles) roleService(role);
  });

  it('has a health check on every service', () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.healthcheck?.test, `${name} healthcheck`).toBeDefined();
      expect(s.healthcheck.disable ?? false).toBe(false);
    }
  });

  it('starts each service after what it depends on is healthy (or done)', () => {
    const conditions = ['service_healthy', 'service_completed_successfully', 'service_started'];
    for (const [name, s] of Object.entries(services)) {
      const deps = s.depends_on ?? {};
      expect(Array.isArray(deps), `${name}: depends_on with conditions`).toBe(false);
      for (const [dep, d] of Object.entries<any>(deps)) {
        expect(services, `${name} depends on ${dep}`).toHaveProperty([dep]);
        expect(conditions).toContain(d.condition);
        // Only the tracing backend is waited for merely started (traces are best effort).
        if (d.condition === 'service_started') expect(dep).toBe('jaeger');
      }
    }
  });

  it('publishes the API on 8080', () => {
    const [, api] = roleService('api');
    expect(api.ports).toContain('8080:8080');
  });

  it('sends every role’s traces to Jaeger’s OTLP HTTP port', () => {
    expect(services.jaeger.ports.join(' ')).toMatch(/4318:4318/);
    expect(services.jaeger.ports.join(' ')).toMatch(/16686:16686/);
    for (const role of Object.keys(ROLE_ENV)) {
      const env = composeEnv(roleService(role)[1].environment);
      expect(env.OTEL_SERVICE_NAME).toBe(`guard-${role}`);
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://jaeger:4318');
    }
  });

  describe.each(Object.keys(ROLE_ENV))('the %s service', (role) => {
    it('sets every variable the role requires and only variables the role reads', () => {
      const [, s] = roleService(role);
      const env = composeEnv(s.environment);
      const schema = ROLE_ENV[role]!;
      for (const key of requiredKeys(schema))
        expect(Object.keys(env), `${role} needs ${key}`).toContain(key);
      const unknown = Object.keys(env).filter((n) => !(n in schema.shape) && !isAllowedExtra(n));
      expect(unknown, `${role} does not read these`).toEqual([]);
      expect(env.MODE ?? 'distributed').toBe('distributed');
    });

    it("parses with the role's own settings schema (nothing set on the host)", () => {
      const r = ROLE_ENV[role]!.safeParse(composeEnv(roleService(role)[1].environment));
      expect(r.success, r.success ? '' : JSON.stringify(r.error.issues)).toBe(true);
    });

    it('takes secrets from the host environment, never a value in the file', () => {
      const raw = composeRawEnv(roleService(role)[1].environment);
      for (const name of SECRET_VARS.filter((n) => n in raw)) {
        expect(raw[name]).toMatch(/^\$\{[A-Z0-9_]+(:?-)?\}$/);
      }
    });

    it('runs the image of this version, built from infra/docker/Dockerfile, locked down', () => {
      const [, s] = roleService(role);
      checkBuild(s);
      checkLockedDown(s);
    });

    it("checks its health on the role's PORT", () => {
      const [, s] = roleService(role);
      const env = composeEnv(s.environment);
      const port = Number(env.PORT ?? defaultOf(ROLE_ENV[role]!, 'PORT'));
      expect(healthcheckPort(s)).toBe(port);
      for (const p of s.ports ?? []) expect(Number(String(p).split(':').at(-1))).toBe(port);
    });
  });
});

describe('docker-compose.yml and k8s/ agree', () => {
  it('on the image and on each role’s port', () => {
    ensureTools();
    const { objects } = renderK8s();
    const deployments = objects.filter((o) => o.kind === 'Deployment');
    for (const role of Object.keys(ROLE_ENV)) {
      const d = deployments.find((o) =>
        o.spec.template.spec.containers[0].env.some(
          (e: any) => e.name === 'ROLE' && e.value === role,
        ),
      )!;
      const c = d.spec.template.spec.containers[0];
      const [, s] = roleService(role);
      expect(c.image).toBe(s.image);
      const env = composeEnv(s.environment);
      expect(c.ports[0].containerPort).toBe(Number(env.PORT ?? defaultOf(ROLE_ENV[role]!, 'PORT')));
    }
  }, 300_000);

  it('on the image tag and the package version', () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    expect(IMAGE).toBe(`guardrail/guard:${pkg.version}`);
  });
});

describe('docker-compose.standalone.yml', () => {
  const entries = Object.entries(standalone.services as Record<string, any>);

  it('runs the standalone server alone', () => {
    expect(entries).toHaveLength(1);
    const [, s] = entries[0]!;
    expect(composeEnv(s.environment).ROLE ?? 'standalone').toBe('standalone');
    expect(composeEnv(s.environment).MODE ?? 'embedded').toBe('embedded');
    checkBuild(s);
    checkLockedDown(s);
  });

  it('keeps its data on a named volume at /data, where GUARD_DATA_DIR points', () => {
    const [, s] = entries[0]!;
    const mount = (s.volumes as string[])
      .map((v) => v.split(':'))
      .find(([, target]) => target === '/data');
    expect(mount).toBeDefined();
    expect(standalone.volumes).toHaveProperty([mount![0]!]);
    expect(composeEnv(s.environment).GUARD_DATA_DIR).toBe('/data');
  });

  it('sets only variables the standalone server reads, valid for it', () => {
    const [, s] = entries[0]!;
    const env = composeEnv(s.environment);
    const unknown = Object.keys(env).filter(
      (n) => !(n in STANDALONE_ENV.shape) && !isAllowedExtra(n),
    );
    expect(unknown).toEqual([]);
    for (const key of requiredKeys(STANDALONE_ENV)) expect(Object.keys(env)).toContain(key);
    const r = STANDALONE_ENV.safeParse(env);
    expect(r.success, r.success ? '' : JSON.stringify(r.error.issues)).toBe(true);
    const raw = composeRawEnv(s.environment);
    for (const name of SECRET_VARS.filter((n) => n in raw)) {
      expect(raw[name]).toMatch(/^\$\{[A-Z0-9_]+(:?-)?\}$/);
    }
  });

  it('listens on every address and publishes 8080, with a health check on it', () => {
    const [, s] = entries[0]!;
    const env = composeEnv(s.environment);
    expect(env.HOST).toBe('0.0.0.0');
    const port = Number(env.PORT ?? defaultOf(STANDALONE_ENV, 'PORT'));
    expect(s.ports).toContain(`8080:${port}`);
    expect(healthcheckPort(s)).toBe(port);
  });
});
