// Generates the Kubernetes JSON schemas kubeconform validates k8s/ against, so validation needs no
// network: `npm`-free, run as
//
//   node scripts/deploy/gen-k8s-schemas.mjs            # from the pinned Kubernetes release
//   node scripts/deploy/gen-k8s-schemas.mjs --swagger path/to/swagger.json
//
// Source: api/openapi-spec/swagger.json of k8s.io/kubernetes@v1.32.4, found with
// `go mod download -json k8s.io/kubernetes@v1.32.4` (the Go module cache; downloaded once).
// Output: k8s/schemas/v1.32.4-standalone-strict/<kind>[-<group>]-<version>.json, the layout and
// names kubeconform looks up with
//   -schema-location 'k8s/schemas/v1.32.4-standalone-strict/{{.ResourceKind}}{{.KindSuffix}}.json'
// (lower-case kind; the group's first label, none for the core group). As openapi2jsonschema's
// "standalone-strict": every $ref inlined, `additionalProperties: false` on every object that
// lists its properties (a typo'd field fails), IntOrString as string-or-integer, Quantity as
// string-or-number, apiVersion and kind fixed to the resource's own.
//
// Only the kinds that `kustomize build k8s` renders are written (stale files are removed): run it
// again after adding a kind to k8s/. The files are formatted with the repo's prettier settings.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { parseAllDocuments } from 'yaml';

const K8S_VERSION = 'v1.32.4';
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(REPO, 'k8s', 'schemas', `${K8S_VERSION}-standalone-strict`);

function arg(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function swaggerPath() {
  const given = arg('--swagger');
  if (given) return path.resolve(given);
  const info = JSON.parse(
    execFileSync('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${K8S_VERSION}`], {
      encoding: 'utf8',
    }),
  );
  if (!info.Dir) throw new Error(`go mod download gave no Dir: ${info.Error ?? 'unknown error'}`);
  return path.join(info.Dir, 'api', 'openapi-spec', 'swagger.json');
}

/** apiVersion/kind of every resource `kustomize build k8s` renders. */
function renderedKinds() {
  const kustomize = path.join(REPO, '.cache', 'tools', 'kustomize');
  if (!existsSync(kustomize)) {
    execFileSync('bash', [path.join(REPO, 'scripts', 'deploy', 'tools.sh')], { stdio: 'inherit' });
  }
  const text = execFileSync(kustomize, ['build', path.join(REPO, 'k8s')], { encoding: 'utf8' });
  const kinds = new Map();
  for (const doc of parseAllDocuments(text)) {
    const { apiVersion, kind } = doc.toJS();
    kinds.set(`${apiVersion}/${kind}`, { apiVersion, kind });
  }
  return [...kinds.values()];
}

/** kubeconform's file name for a resource: kind, the group's first label (not for core), version. */
export function schemaFileName(apiVersion, kind) {
  const parts = apiVersion.split('/');
  const version = parts.at(-1);
  const suffix = parts.length > 1 ? `-${parts[0].split('.')[0]}-${version}` : `-${version}`;
  return `${kind.toLowerCase()}${suffix.toLowerCase()}.json`;
}

function standalone(definitions, name, stack = []) {
  if (stack.includes(name)) {
    throw new Error(`recursive definition ${[...stack, name].join(' -> ')}: not supported`);
  }
  const resolve = (node, inStack) => {
    if (Array.isArray(node)) return node.map((n) => resolve(n, inStack));
    if (node === null || typeof node !== 'object') return node;
    if (typeof node.$ref === 'string') {
      const ref = node.$ref.replace(/^#\/definitions\//, '');
      if (!(ref in definitions)) throw new Error(`unknown $ref ${node.$ref}`);
      const { $ref: _ref, ...rest } = node;
      return { ...standalone(definitions, ref, inStack), ...resolve(rest, inStack) };
    }
    if (node.format === 'int-or-string') {
      return { ...pick(node, 'description'), oneOf: [{ type: 'string' }, { type: 'integer' }] };
    }
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      // `properties` maps field names to schemas: a field named like a keyword is still a field.
      out[k] =
        k === 'properties'
          ? Object.fromEntries(Object.entries(v).map(([f, s]) => [f, resolve(s, inStack)]))
          : resolve(v, inStack);
    }
    if (out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
    return out;
  };
  let def = definitions[name];
  if (name === 'io.k8s.apimachinery.pkg.api.resource.Quantity') {
    def = { ...pick(def, 'description'), oneOf: [{ type: 'string' }, { type: 'number' }] };
  }
  return resolve(def, [...stack, name]);
}

function pick(o, ...keys) {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}

async function main() {
  const swagger = JSON.parse(readFileSync(swaggerPath(), 'utf8'));
  const definitions = swagger.definitions;
  const wanted = renderedKinds();
  const prettierOptions = (await prettier.resolveConfig(path.join(OUT, 'x.json'))) ?? {};
  mkdirSync(OUT, { recursive: true });
  const written = new Set();
  for (const { apiVersion, kind } of wanted) {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const name = Object.keys(definitions).find((n) =>
      (definitions[n]['x-kubernetes-group-version-kind'] ?? []).some(
        (g) => g.group === group && g.version === version && g.kind === kind,
      ),
    );
    if (!name) throw new Error(`${apiVersion} ${kind} is not in Kubernetes ${K8S_VERSION}`);
    const schema = standalone(definitions, name);
    schema.properties.apiVersion = { ...schema.properties.apiVersion, enum: [apiVersion] };
    schema.properties.kind = { ...schema.properties.kind, enum: [kind] };
    const file = schemaFileName(apiVersion, kind);
    const text = await prettier.format(
      JSON.stringify({ $schema: 'http://json-schema.org/schema#', ...schema }),
      { ...prettierOptions, parser: 'json' },
    );
    writeFileSync(path.join(OUT, file), text);
    written.add(file);
    console.log(`${path.relative(REPO, path.join(OUT, file))}  (${apiVersion} ${kind})`);
  }
  for (const file of readdirSync(OUT)) {
    if (file.endsWith('.json') && !written.has(file)) {
      rmSync(path.join(OUT, file));
      console.log(`removed stale ${file}`);
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
