/**
 * The platform serves the whole reference surface: every operation of the reference description
 * (`../shared/reference/inscada-openapi-subset.json`, when it is there) appears in the platform's own
 * `/openapi.json` at the same method and path, under the same operationId, with the reference's path and
 * query parameters (required where the reference requires them), a body where the reference takes one,
 * and the reference's success status.
 */
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';

type Json = Record<string, any>;
const file = new URL('../../shared/reference/inscada-openapi-subset.json', import.meta.url);

/**
 * Operations another piece of work brings, reported as to-do (not failures) while they are absent. Remove an
 * entry once its work has landed: from then on its absence fails like any other.
 */
const comingWithOtherWork: Record<string, string> = {};
const methods = ['get', 'put', 'post', 'delete', 'patch'];

t.test(
  "every operation of the reference is in the platform's OpenAPI document",
  { skip: existsSync(file) ? false : 'no ../shared/reference' },
  async (t) => {
    const reference = JSON.parse(readFileSync(file, 'utf8')) as Json;
    const p = await startTestPlatform();
    t.teardown(() => p.stop());
    const ours = (await (await fetch(`${p.url}/openapi.json`)).json()) as Json;

    const expected = Object.entries(reference.paths as Json).flatMap(([path, item]) =>
      methods.filter((m) => (item as Json)[m]).map((method) => ({ path, method, op: (item as Json)[method] as Json })),
    );
    const served = expected;

    const absent = served.filter(({ path, method }) => !ours.paths[path]?.[method]);
    const missing = absent
      .filter(({ op }) => !(op.operationId in comingWithOtherWork))
      .map(({ path, method, op }) => `${method.toUpperCase()} ${path} (${op.operationId ?? 'no operationId'})`);
    t.same(missing, [], `${served.length - absent.length} of ${served.length} reference operations are served`);
    for (const [operationId, why] of Object.entries(comingWithOtherWork)) {
      t.notOk(
        absent.some(({ op }) => op.operationId === operationId),
        `${operationId} is served`,
        { todo: absent.some(({ op }) => op.operationId === operationId) ? why : false },
      );
    }

    for (const { path, method, op } of served) {
      const mine = ours.paths[path]?.[method] as Json | undefined;
      if (!mine) continue;
      const label = `${method.toUpperCase()} ${path}`;
      if (op.operationId) t.equal(mine.operationId, op.operationId, `${label}: operationId`);
      const params = new Map(((mine.parameters ?? []) as Json[]).map((q) => [`${q.in} ${q.name}`, q]));
      // An object-typed parameter (a filter, a Pageable) is the generator's form of optional fields spread
      // into the query; only named parameters are compared.
      for (const q of ((op.parameters ?? []) as Json[]).filter((q) => !q.schema?.$ref)) {
        const found = params.get(`${q.in} ${q.name}`);
        t.ok(found, `${label}: ${q.in} parameter ${q.name}`);
        if (found && q.required) t.equal(found.required, true, `${label}: ${q.name} is required`);
        if (found && q.schema?.type === 'array') t.equal(found.schema?.type, 'array', `${label}: ${q.name} is a list`);
      }
      const referenceNames = new Set(((op.parameters ?? []) as Json[]).map((q) => `${q.in} ${q.name}`));
      const extraRequired = [...params.values()]
        .filter((q) => q.in !== 'header' && q.required && !referenceNames.has(`${q.in} ${q.name}`))
        .map((q) => q.name);
      t.same(extraRequired, [], `${label}: no required parameter the reference lacks`);
      if (op.requestBody) t.ok(mine.requestBody, `${label}: takes a body`);
      const status = Object.keys(op.responses as Json)[0];
      t.ok(mine.responses?.[status as string], `${label}: answers ${status}`);
    }
  },
);
