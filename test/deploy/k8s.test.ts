import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  IMAGE,
  REPO,
  ROLE_ENV,
  SCHEMA_DIR,
  SECRET_VARS,
  defaultOf,
  ensureTools,
  entryPointRoles,
  isAllowedExtra,
  kubeconform,
  renderK8s,
  requiredKeys,
  type K8sObject,
} from './support.js';

// The kustomize base (k8s/) rendered, checked against what each role reads and against the
// Kubernetes v1.32.4 schemas kept in k8s/schemas (kubeconform, no network).

let rendered: { text: string; objects: K8sObject[] };
let tmp: string;

beforeAll(() => {
  ensureTools();
  rendered = renderK8s();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'guard-k8s-'));
}, 300_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const ofKind = (kind: string) => rendered.objects.filter((o) => o.kind === kind);
const configMaps = () => new Map(ofKind('ConfigMap').map((c) => [c.metadata.name, c]));

function deploymentOf(role: string): K8sObject {
  const found = ofKind('Deployment').filter((d) =>
    d.spec.template.spec.containers.some((c: any) =>
      (c.env ?? []).some((e: any) => e.name === 'ROLE' && e.value === role),
    ),
  );
  expect(found, `one Deployment runs ROLE=${role}`).toHaveLength(1);
  return found[0]!;
}

interface ContainerEnv {
  /** Every variable the container gets, whatever its source. */
  names: string[];
  /** Values known from the manifests (literals, ConfigMap keys); secrets are not. */
  values: Record<string, string>;
  secretRefs: { name: string; secret: string; key: string; optional: boolean }[];
}

function containerEnv(c: any): ContainerEnv {
  const cms = configMaps();
  const names: string[] = [];
  const values: Record<string, string> = {};
  const secretRefs: ContainerEnv['secretRefs'] = [];
  for (const from of c.envFrom ?? []) {
    if (from.secretRef)
      throw new Error('envFrom secretRef: name each secret key with secretKeyRef');
    const cm = cms.get(from.configMapRef.name);
    expect(cm, `ConfigMap ${from.configMapRef.name}`).toBeDefined();
    for (const [k, v] of Object.entries<string>(cm!.data ?? {})) {
      names.push(`${from.prefix ?? ''}${k}`);
      values[`${from.prefix ?? ''}${k}`] = v;
    }
  }
  for (const e of c.env ?? []) {
    names.push(e.name);
    if (typeof e.value === 'string') values[e.name] = e.value;
    const cmRef = e.valueFrom?.configMapKeyRef;
    if (cmRef) {
      const cm = cms.get(cmRef.name);
      expect(cm, `ConfigMap ${cmRef.name} (for ${e.name})`).toBeDefined();
      expect(cm!.data, `ConfigMap ${cmRef.name} has key ${cmRef.key}`).toHaveProperty([cmRef.key]);
      values[e.name] = cm!.data[cmRef.key];
    }
    const sRef = e.valueFrom?.secretKeyRef;
    if (sRef) {
      secretRefs.push({
        name: e.name,
        secret: sRef.name,
        key: sRef.key,
        optional: sRef.optional === true,
      });
    }
  }
  return { names, values, secretRefs };
}

function portOf(role: string, env: ContainerEnv): number {
  return Number(env.values.PORT ?? defaultOf(ROLE_ENV[role]!, 'PORT'));
}

/** A probe's or Service's port (a number or a container port's name) as a number. */
function resolvePort(container: any, port: number | string): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p: any) => p.name === port)?.containerPort;
}

function matches(selector: Record<string, string>, labels: Record<string, string> | undefined) {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

describe('k8s/ rendered with kustomize', () => {
  it('renders a ConfigMap and, per role of the entry point, a Deployment', () => {
    expect(ofKind('ConfigMap')).toHaveLength(1);
    const roles = entryPointRoles();
    expect(roles.sort()).toEqual(Object.keys(ROLE_ENV).sort());
    for (const role of roles) deploymentOf(role);
    expect(ofKind('Deployment')).toHaveLength(roles.length);
  });

  it('is namespace-agnostic and commits no Secret', () => {
    for (const o of rendered.objects)
      expect(o.metadata, o.metadata.name).not.toHaveProperty('namespace');
    expect(ofKind('Secret')).toHaveLength(0);
  });

  describe.each(Object.keys(ROLE_ENV))('the %s Deployment', (role) => {
    const container = () => {
      const d = deploymentOf(role);
      expect(d.spec.template.spec.containers).toHaveLength(1);
      return { d, c: d.spec.template.spec.containers[0], pod: d.spec.template.spec };
    };

    it('sets every variable the role requires and only variables the role reads', () => {
      const { c } = container();
      const env = containerEnv(c);
      const schema = ROLE_ENV[role]!;
      for (const key of requiredKeys(schema))
        expect(env.names, `${role} needs ${key}`).toContain(key);
      const unknown = env.names.filter((n) => !(n in schema.shape) && !isAllowedExtra(n));
      expect(unknown, `${role} does not read these`).toEqual([]);
      expect(new Set(env.names).size, 'no variable twice').toBe(env.names.length);
      expect(env.values.ROLE).toBe(role);
      expect(env.values.MODE ?? 'distributed').toBe('distributed');
      expect(env.values.OTEL_SERVICE_NAME).toBe(`guard-${role}`);
      expect(env.names).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    });

    it("parses with the role's own settings schema (secrets unset)", () => {
      const { c } = container();
      const { values } = containerEnv(c);
      const r = ROLE_ENV[role]!.safeParse(values);
      expect(r.success, r.success ? '' : JSON.stringify(r.error.issues)).toBe(true);
    });

    it('takes secrets from the Secret guard-secrets only', () => {
      const { c } = container();
      const env = containerEnv(c);
      for (const ref of env.secretRefs) {
        expect(ref.secret).toBe('guard-secrets');
        expect(SECRET_VARS).toContain(ref.name);
      }
      for (const name of SECRET_VARS) {
        if (!env.names.includes(name)) continue;
        expect(env.values[name], `${name} is not a literal or ConfigMap value`).toBeUndefined();
        expect(env.secretRefs.map((s) => s.name)).toContain(name);
      }
    });

    it('runs the image of this version', () => {
      expect(container().c.image).toBe(IMAGE);
    });

    it("serves its probes, metrics and Service on the role's PORT", () => {
      const { d, c } = container();
      const env = containerEnv(c);
      const port = portOf(role, env);
      expect(c.ports.map((p: any) => p.containerPort)).toEqual([port]);
      expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
      for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe].filter(Boolean)) {
        expect(resolvePort(c, probe.httpGet.port)).toBe(port);
      }
      const ann = d.spec.template.metadata.annotations ?? {};
      expect(ann['prometheus.io/scrape']).toBe('true');
      expect(Number(ann['prometheus.io/port'])).toBe(port);
      expect(ann['prometheus.io/path']).toBe('/metrics');
      const services = ofKind('Service').filter((s) =>
        matches(s.spec.selector ?? {}, d.spec.template.metadata.labels),
      );
      if (role === 'api') expect(services.length).toBeGreaterThan(0);
      for (const s of services) {
        for (const p of s.spec.ports) expect(resolvePort(c, p.targetPort ?? p.port)).toBe(port);
      }
    });

    it('has requests, limits and a locked-down security context', () => {
      const { c, pod } = container();
      for (const r of ['cpu', 'memory']) {
        expect(c.resources?.requests?.[r], `requests.${r}`).toBeDefined();
        expect(c.resources?.limits?.[r], `limits.${r}`).toBeDefined();
      }
      const sc = { ...pod.securityContext, ...c.securityContext };
      expect(sc.runAsNonRoot).toBe(true);
      expect(sc.runAsUser).toBe(1000);
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
      expect(c.securityContext.capabilities?.drop).toEqual(['ALL']);
      expect(sc.seccompProfile?.type).toBe('RuntimeDefault');
      const tmpMount = c.volumeMounts?.find((m: any) => m.mountPath === '/tmp');
      expect(tmpMount, 'a writable /tmp').toBeDefined();
      const vol = pod.volumes.find((v: any) => v.name === tmpMount.name);
      expect(vol?.emptyDir).toBeDefined();
    });

    it('gives the graceful shutdown time to finish before SIGKILL', () => {
      const { c, pod } = container();
      const env = containerEnv(c);
      // What each role may still be doing after SIGTERM: the api's and the worker's drain
      // settings, a scorer's requests in hand (each bounded by its scoring deadline), and the
      // ingester's batch in hand (no setting: 10 s is ample for one Cassandra write and commit).
      const graceKey = {
        api: 'GUARD_SHUTDOWN_GRACE_MS',
        'jobs-worker': 'GUARD_JOBS_SHUTDOWN_GRACE_MS',
        scorer: 'GUARD_SCORE_TIMEOUT_MS',
      }[role];
      const shutdownMs = graceKey
        ? Number(env.values[graceKey] ?? defaultOf(ROLE_ENV[role]!, graceKey))
        : 10_000;
      const preStopMs = (c.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(
        shutdownMs + preStopMs + 5000,
      );
    });

    it('has a PodDisruptionBudget that selects its pods, and only those', () => {
      const { d } = container();
      const pdbs = ofKind('PodDisruptionBudget').filter((p) =>
        matches(p.spec.selector.matchLabels, d.spec.template.metadata.labels),
      );
      expect(pdbs).toHaveLength(1);
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
      for (const other of ofKind('Deployment').filter((o) => o !== d)) {
        expect(
          matches(pdbs[0]!.spec.selector.matchLabels, other.spec.template.metadata.labels),
        ).toBe(false);
      }
    });

    it('has a HorizontalPodAutoscaler on it, and no replica count of its own', () => {
      const { d } = container();
      const hpas = ofKind('HorizontalPodAutoscaler').filter(
        (h) =>
          h.spec.scaleTargetRef.kind === 'Deployment' &&
          h.spec.scaleTargetRef.name === d.metadata.name,
      );
      expect(hpas).toHaveLength(1);
      expect(hpas[0]!.apiVersion).toBe('autoscaling/v2');
      expect(d.spec.replicas).toBeUndefined();
      const cpu = hpas[0]!.spec.metrics.find(
        (m: any) => m.type === 'Resource' && m.resource.name === 'cpu',
      );
      expect(cpu, 'scales on CPU').toBeDefined();
      expect(hpas[0]!.spec.minReplicas).toBeLessThanOrEqual(hpas[0]!.spec.maxReplicas);
    });
  });

  it('every HorizontalPodAutoscaler targets a rendered Deployment', () => {
    const names = ofKind('Deployment').map((d) => d.metadata.name);
    for (const h of ofKind('HorizontalPodAutoscaler')) {
      expect(h.spec.scaleTargetRef.apiVersion).toBe('apps/v1');
      expect(names).toContain(h.spec.scaleTargetRef.name);
    }
  });

  it('scales the scorers on the queue depth metric they export', () => {
    const d = deploymentOf('scorer');
    const hpa = ofKind('HorizontalPodAutoscaler').find(
      (h) => h.spec.scaleTargetRef.name === d.metadata.name,
    )!;
    const queue = hpa.spec.metrics.filter(
      (m: any) =>
        (m.type === 'External' || m.type === 'Pods') &&
        m[m.type === 'External' ? 'external' : 'pods'].metric.name,
    );
    expect(queue).toHaveLength(1);
    const name = queue[0].external?.metric.name ?? queue[0].pods?.metric.name;
    expect(name).toBe('guard_scorer_queue_depth');
    const dir = path.join(REPO, 'services/scorer/src');
    const exported = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => readFileSync(path.join(dir, f), 'utf8'))
      .join('\n');
    expect(exported).toContain(`'${name}'`);
  });

  it("never runs more ingesters than the activity topic's partitions", () => {
    const d = deploymentOf('activity-ingester');
    const env = containerEnv(d.spec.template.spec.containers[0]);
    const partitions = Number(
      env.values.KAFKA_ACTIVITY_PARTITIONS ??
        defaultOf(ROLE_ENV['activity-ingester']!, 'KAFKA_ACTIVITY_PARTITIONS'),
    );
    const hpa = ofKind('HorizontalPodAutoscaler').find(
      (h) => h.spec.scaleTargetRef.name === d.metadata.name,
    )!;
    expect(hpa.spec.maxReplicas).toBeLessThanOrEqual(partitions);
  });

  it("the kustomization's image tag is the package version", () => {
    const k = parse(readFileSync(path.join(REPO, 'k8s/kustomization.yaml'), 'utf8'));
    for (const image of k.images ?? []) expect(`${image.name}:${image.newTag}`).toBe(IMAGE);
  });
});

describe('kubeconform with the schemas in k8s/schemas', () => {
  it('has a schema for every rendered kind, and none unused', () => {
    const want = new Set(
      rendered.objects.map((o) => {
        const [group, version] = o.apiVersion.includes('/')
          ? o.apiVersion.split('/')
          : ['', o.apiVersion];
        return `${o.kind.toLowerCase()}${group ? `-${group.split('.')[0]}` : ''}-${version}.json`;
      }),
    );
    expect(new Set(readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json')))).toEqual(want);
  });

  it('accepts the rendered manifests', () => {
    const file = path.join(tmp, 'rendered.yaml');
    writeFileSync(file, rendered.text);
    const r = kubeconform(file);
    expect(r.output).toMatch(/Invalid: 0, Errors: 0, Skipped: 0/);
    expect(r.status, r.output).toBe(0);
  });

  it.each([
    [
      'a typo in a field name',
      (t: string) => t.replace('readinessProbe:', 'readinesProbe:'),
      /readinesProbe/,
    ],
    [
      'a field at the wrong level',
      (t: string) => t.replace(/\n(\s+)containers:/, '\n$1replicas: 2\n$1containers:'),
      /replicas/,
    ],
    [
      'a string for a number',
      (t: string) => t.replace(/containerPort: \d+/, 'containerPort: eighty'),
      /containerPort/,
    ],
    [
      'an unknown kind',
      (t: string) => t.replace('kind: PodDisruptionBudget', 'kind: PodDisruptionBudgit'),
      /PodDisruptionBudgit|schema/,
    ],
  ])('rejects %s', (_what, mutate, message) => {
    const broken = mutate(rendered.text);
    expect(broken).not.toBe(rendered.text);
    const file = path.join(tmp, 'broken.yaml');
    writeFileSync(file, broken);
    const r = kubeconform(file);
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(message);
  });
});
