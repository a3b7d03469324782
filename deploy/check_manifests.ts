/**
 * Checks rendered Kubernetes manifests (one file per overlay, as `kubectl kustomize` prints them): every
 * object validates against the Kubernetes schemas (kubernetes-models; custom resources are named and
 * skipped), and everything a manifest names exists in the code: environment variables, probe paths,
 * container ports, image names. Then the properties an operator relies on: probes, resources, a
 * non-root read-only container, a grace period longer than the drain, an autoscaler and a disruption
 * budget per Deployment, default-deny network policies with only the gateway open to outside traffic, and
 * in `production` at least two replicas spread over zones. Prints `ok: …` / `FAILED: …` lines; exits
 * non-zero on a failure.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const root = new URL('..', import.meta.url).pathname;
let failures = 0;
const report = (ok: boolean, what: string) => {
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  if (!ok) failures++;
};

/** Every TypeScript source of the platform, concatenated, to look names up in. */
function sources(): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'test') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) out.push(readFileSync(path, 'utf8'));
    }
  };
  for (const dir of ['contracts', 'platform', 'gateway', 'auth-service', 'config-service', 'protocol-service', 'history-service'])
    walk(join(root, dir, 'src'));
  out.push(readFileSync(join(root, 'launch.ts'), 'utf8'), readFileSync(join(root, 'main.ts'), 'utf8'));
  return out.join('\n');
}

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: unknown };

/** A module of kubernetes-models: the kind's class, by its name or as the default export. */
type Models = Record<string, new (o: unknown) => { validate(): void }>;

async function validateSchema(obj: K8sObject): Promise<string | null> {
  if (obj.apiVersion.includes('cnpg.io')) return 'skipped (custom resource of the CloudNativePG operator)';
  const loaded = (await import(`kubernetes-models/${obj.apiVersion}/${obj.kind}`)) as Models;
  const Model = loaded[obj.kind] ?? loaded.default;
  if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate();
  return null;
}

const code = sources();
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
for (const file of process.argv.slice(2)) {
  const objects = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJSON() as K8sObject)
    .filter(Boolean);
  const envNames = new Set<string>();
  for (const obj of objects) {
    const label = `${file}: ${obj.kind} ${obj.metadata.name}`;
    try {
      const note = await validateSchema(obj);
      report(true, `${label} ${note ?? 'matches the Kubernetes schema'}`);
    } catch (err) {
      report(false, `${label}: ${(err as Error).message.slice(0, 300)}`);
    }
    if (obj.kind === 'ConfigMap') for (const k of Object.keys((obj.data as object) ?? {})) envNames.add(k);
    if (obj.kind === 'Secret') for (const k of Object.keys((obj.stringData as object) ?? {})) envNames.add(k);
    if (obj.kind !== 'Deployment') continue;
    const pod = (obj.spec as { template: { spec: { containers: Container[] } } }).template.spec;
    for (const c of pod.containers) checkContainer(file, obj.metadata.name, c, envNames);
  }
  for (const name of envNames) report(code.includes(`'${name}'`), `${file}: the code reads ${name}`);
  checkProperties(file, objects);
}

type Probe = { httpGet?: { path: string; port: string | number } };
type Container = {
  name: string;
  image: string;
  env?: { name: string; value?: string }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
};

function checkContainer(file: string, deployment: string, c: Container, envNames: Set<string>): void {
  for (const e of c.env ?? []) envNames.add(e.name);
  report(c.image === `scada-platform-${c.name}:${version}`, `${file}: ${deployment} runs the image scada-platform-${c.name}:${version}`);
  const health = c.env?.find((e) => e.name === 'HEALTH_PORT')?.value;
  for (const p of c.ports ?? []) {
    const expected = p.name === 'http' ? 8081 : p.name === 'https' ? 8082 : p.name === 'health' ? Number(health) : NaN;
    report(p.containerPort === expected, `${file}: ${deployment} port ${p.name} is ${p.containerPort}, as the code listens`);
  }
  for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
    const path = probe?.httpGet?.path;
    if (!path) continue;
    const served = code.includes(`'${path}'`);
    report(served, `${file}: ${deployment} probes ${path}, which the code serves`);
    report(
      (c.ports ?? []).some((p) => p.name === probe?.httpGet?.port),
      `${file}: ${deployment} probes a port it declares`,
    );
  }
}

type Spec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The operating properties of one rendered overlay. */
function checkProperties(file: string, objects: K8sObject[]): void {
  const production = file.endsWith('production.yaml');
  const of = (kind: string) => objects.filter((o) => o.kind === kind) as (K8sObject & { spec: Spec })[];
  const policies = of('NetworkPolicy');
  for (const d of of('Deployment')) {
    const name = d.metadata.name;
    const pod = d.spec.template.spec as Spec;
    const labels = d.spec.template.metadata.labels as Record<string, string>;
    const matches = (selector: Spec | undefined) =>
      Object.entries((selector?.matchLabels ?? {}) as Record<string, string>).every(([k, v]) => labels[k] === v);
    for (const c of pod.containers as Spec[]) {
      report(Boolean(c.livenessProbe && c.readinessProbe), `${file}: ${name} has liveness and readiness probes`);
      report(
        Boolean(c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory),
        `${file}: ${name} requests CPU and memory and limits memory`,
      );
      report(
        c.securityContext?.readOnlyRootFilesystem === true && c.securityContext?.allowPrivilegeEscalation === false,
        `${file}: ${name} runs read-only without privilege escalation`,
      );
    }
    report(
      pod.securityContext?.runAsNonRoot === true && Number(pod.securityContext?.runAsUser) > 0,
      `${file}: ${name} runs as a non-root user`,
    );
    report(
      Number(pod.terminationGracePeriodSeconds) > 10,
      `${file}: ${name} gives more time to stop than the 10 s drain (SHUTDOWN_GRACE_MS)`,
    );
    report(
      of('HorizontalPodAutoscaler').some((h) => h.spec.scaleTargetRef?.name === name),
      `${file}: ${name} has an autoscaler`,
    );
    report(
      of('PodDisruptionBudget').some((b) => matches(b.spec.selector)),
      `${file}: ${name} has a disruption budget`,
    );
    const ingress = policies.filter(
      (p) => matches(p.spec.podSelector) && (p.spec.policyTypes as string[] | undefined)?.includes('Ingress'),
    );
    // Open: a rule admitting any source (or an address block) on a port other than the health probe's.
    const health = (pod.containers as Spec[])
      .flatMap((c) => (c.ports ?? []) as Spec[])
      .filter((p) => p.name === 'health')
      .map((p) => p.containerPort);
    const open = ingress.some((p) =>
      ((p.spec.ingress ?? []) as Spec[]).some(
        (rule) =>
          (!rule.from || (rule.from as Spec[]).some((f) => f.ipBlock)) &&
          !(rule.ports as Spec[] | undefined)?.every((port) => health.includes(port.port)),
      ),
    );
    report(
      open === name.endsWith('gateway'),
      `${file}: ${name} ${name.endsWith('gateway') ? 'takes' : 'does not take'} traffic from outside the cluster`,
    );
    if (production) {
      report(Number(d.spec.replicas) >= 2, `${file}: ${name} runs at least two replicas`);
      const spread = (pod.topologySpreadConstraints ?? []) as Spec[];
      report(
        spread.some((t) => t.topologyKey === 'topology.kubernetes.io/zone'),
        `${file}: ${name} spreads its replicas over zones`,
      );
      report(
        of('HorizontalPodAutoscaler').every((h) => Number(h.spec.minReplicas) >= 2),
        `${file}: autoscalers keep at least two replicas`,
      );
    }
  }
  const denyAll = policies.find(
    (p) => Object.keys(p.spec.podSelector ?? {}).length === 0 || Object.keys(p.spec.podSelector?.matchLabels ?? {}).length === 0,
  );
  report(
    Boolean(denyAll && !(denyAll.spec.ingress as unknown[] | undefined)?.length),
    `${file}: a default-deny network policy covers every pod`,
  );
}

process.exit(failures === 0 ? 0 : 1);
