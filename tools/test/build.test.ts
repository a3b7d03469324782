import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { storeTemplateFile } from '@scada/platform';
import { buildAll, isBuilt, repoRoot } from '../build/build.ts';
import { closureOf, imagePackage, type Lockfile } from '../build/image_package.ts';
import { packagesImportedBy, packagesRequiredBy } from '../build/imports.ts';
import { readWorkspaces, resolveWorkspaceSpecifier } from '../build/workspaces.ts';

t.test('the packages a bundle loads are read from its imports and dynamic imports, minified or not', async (t) => {
  const bundle = [
    'import { pino } from "pino";',
    'import {',
    '  Type',
    '} from "@sinclair/typebox/compiler";',
    'import "reflect-metadata";',
    'import { randomUUID } from "node:crypto";',
    'import { thing } from "./chunk-ABC.mjs";',
    'const { generate } = await import("selfsigned");',
    'import{a as b}from"jose";import*as c from"koa";var d=1;',
    'throw new Error("Usage: require(\'keygrip\')(<keys>)");',
    'const sql = `select name',
    'from "users";`;',
  ].join('\n');
  t.same(packagesImportedBy(bundle), ['@sinclair/typebox', 'jose', 'koa', 'pino', 'reflect-metadata', 'selfsigned']);
});

t.test('the packages a source loads through a require made with createRequire', async (t) => {
  const source =
    'const require = createRequire(import.meta.url);\nconst abs = require(\'swagger-ui-dist/absolute-path.js\');\nconst x = require2("pg");';
  t.same(packagesRequiredBy(source), ['pg', 'swagger-ui-dist']);
});

/** A lock file as npm writes it, for a root that depends on `a` and `b` and develops with `d`. */
const lock: Lockfile = {
  name: 'repo',
  version: '1.0.0',
  lockfileVersion: 3,
  packages: {
    '': { name: 'repo', version: '1.0.0' },
    'node_modules/a': {
      version: '1.0.0',
      dependencies: { c: '^2.0.0' },
      peerDependencies: { p: '*' },
      peerDependenciesMeta: { p: { optional: true } },
    },
    'node_modules/a/node_modules/c': { version: '2.1.0' },
    'node_modules/b': { version: '1.0.0', dependencies: { c: '^1.0.0' }, optionalDependencies: { native: '1' } },
    'node_modules/c': { version: '1.4.0' },
    'node_modules/d': { version: '3.0.0', dev: true, dependencies: { e: '1' } },
    'node_modules/e': { version: '1.0.0', dev: true },
    'node_modules/@scada/auth': { link: true, resolved: 'auth-service' },
  },
};

t.test("an image's packages are what its bundle imports and what those need, found as Node finds them", async (t) => {
  t.same(closureOf(lock, ['a']), ['node_modules/a', 'node_modules/a/node_modules/c'], 'the nested copy, not the hoisted one');
  t.same(closureOf(lock, ['b']), ['node_modules/b', 'node_modules/c'], 'a missing optional dependency is no error');
  t.throws(() => closureOf(lock, ['missing']), /missing \(needed by the bundle\) is not in package-lock.json/);
  t.throws(() => closureOf(lock, ['@scada/auth']), /workspace package/);
});

t.test("an image's package.json and lock file pin exactly the repository's production versions", async (t) => {
  const root = { version: '1.0.0', dependencies: { a: '1.0.0', b: '1.0.0' }, overrides: { c: '1.4.0', z: '9' } };
  const image = imagePackage(
    'scada-platform-x',
    root,
    { ...lock, packages: { ...lock.packages, 'node_modules/a': { ...lock.packages['node_modules/a'], dev: true } } },
    ['b', 'a'],
  );
  t.same(image.manifest.dependencies, { a: '1.0.0', b: '1.0.0' });
  t.same(image.manifest.overrides, { c: '1.4.0' }, 'only overrides of installed packages');
  t.same(Object.keys(image.lock.packages), ['', 'node_modules/a', 'node_modules/a/node_modules/c', 'node_modules/b', 'node_modules/c']);
  t.equal(image.lock.packages['node_modules/a'].dev, undefined, 'nothing in an image is development-only');
  t.throws(() => imagePackage('x', root, lock, ['d']), /imports d, which package.json does not list under dependencies/);
});

t.test('workspace packages are found by their package.json names and exports', async (t) => {
  const workspaces = readWorkspaces(repoRoot);
  t.ok(workspaces.has('@scada/platform'));
  t.equal(resolveWorkspaceSpecifier(workspaces, '@scada/auth/main'), join(repoRoot, 'auth-service', 'src', 'main.ts'));
  t.equal(resolveWorkspaceSpecifier(workspaces, '@scada/contracts'), join(repoRoot, 'contracts', 'src', 'mod.ts'));
  t.equal(resolveWorkspaceSpecifier(workspaces, 'pino'), null);
  t.throws(() => resolveWorkspaceSpecifier(workspaces, '@scada/auth/src/service.ts'), /does not export \.\/src\/service\.ts/);
});

t.test('each bundle carries its own part only, with its migrations beside it, and the build knows when it is stale', async (t) => {
  const dist = await mkdtemp(join(tmpdir(), 'scada-build-'));
  t.teardown(() => rm(dist, { recursive: true, force: true }));
  await buildAll(dist);
  t.ok(isBuilt(dist), 'a fresh build matches the sources');
  const sourcesOf = async (target: string) => {
    const meta = JSON.parse(await readFile(join(dist, `${target}.meta.json`), 'utf8')) as { inputs: Record<string, unknown> };
    return new Set(Object.keys(meta.inputs).map((p) => p.split('/')[0]));
  };
  const parts = ['gateway', 'auth-service', 'config-service', 'protocol-service'];
  const own: Record<string, string> = { gateway: 'gateway', auth: 'auth-service', config: 'config-service', protocol: 'protocol-service' };
  for (const [target, folder] of Object.entries(own)) {
    const inputs = await sourcesOf(target);
    t.same(
      parts.filter((p) => inputs.has(p)),
      [folder],
      `the ${target} bundle holds ${folder} and no other part`,
    );
  }
  const edge = await sourcesOf('edge');
  t.same(
    parts.filter((p) => edge.has(p)),
    parts,
    'the all-in-one bundle holds every part',
  );
  const configImage = JSON.parse(await readFile(join(dist, 'config', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const name of ['koa', 'saxes', 'jose', 'swagger-ui-dist', 'tsx'])
    t.notOk(name in configImage.dependencies, `the config image does not install ${name}`);
  const gatewayImage = JSON.parse(await readFile(join(dist, 'gateway', 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of ['pg', '@electric-sql/pglite'])
    t.notOk(name in gatewayImage.dependencies, `the gateway image does not install ${name}`);
  const migration = await readFile(join(dist, 'edge', 'config-service', 'migrations', '0001_configuration_resources.sql'), 'utf8');
  t.equal(migration, await readFile(join(repoRoot, 'config-service', 'migrations', '0001_configuration_resources.sql'), 'utf8'));
  const edgeCode = await readFile(join(dist, 'edge', 'main.mjs'), 'utf8');
  t.match(edgeCode, /new URL\(["']\.\/config-service\/migrations\/["'],\s*import\.meta\.url\)/, 'the bundle reads them beside itself');
  t.notOk(isBuilt(join(dist, 'missing')), 'no build is not a fresh build');
  // The embedded store's prepared data folder, beside each bundle that carries the store.
  for (const target of ['edge', 'protocol'])
    t.ok(existsSync(join(dist, target, storeTemplateFile)), `the ${target} bundle carries a store template`);
  t.notOk(existsSync(join(dist, 'gateway', storeTemplateFile)), 'the gateway, with no store, carries none');
  // An ES import of node:http reads every export, and on Node 22 and later one of them loads fetch.
  for (const target of ['gateway', 'edge', 'auth']) {
    const code = await readFile(join(dist, target, 'main.mjs'), 'utf8');
    t.notMatch(code, /^import [^;]*from "(node:)?https?";$/m, `the ${target} bundle has no ES import of node:http or node:https`);
    t.notMatch(code, /^import [^;]*from "@koa\/router";$/m, `the ${target} bundle has no ES import of @koa/router`);
  }
  // Packages are bundled in, minified, except those that find their own files at run time.
  t.notOk('koa' in gatewayImage.dependencies, 'Koa is in the gateway bundle, not installed beside it');
  t.match(
    gatewayImage.dependencies,
    { 'swagger-ui-dist': String, pino: String },
    'what reads its own files, or is required by name, is installed',
  );
});
