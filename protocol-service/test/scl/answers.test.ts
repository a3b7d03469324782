/**
 * The protocol service answers what the SCL parser produces (`@scada/iec61850`'s parse report and browse
 * tree, in the parser's own types) as the API's `SclParseReport` and `SclBrowseTree`: every tree and report
 * of the project's SCL files, and of the shared device files when they are beside the project, matches
 * those schemas.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SclBrowseTree, SclParseReport } from '@scada/contracts';
import { browseParts, parseScl, toBrowseTree } from '@scada/iec61850';
import { Value } from '@sinclair/typebox/value';
import t from 'tap';

const own = fileURLToPath(new URL('../../../test/fixtures/scl/', import.meta.url));
const shared = fileURLToPath(new URL('../../../../shared/scl/', import.meta.url));

async function filesOf(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return (await readdir(dir)).filter((n) => /\.(icd|cid|scd|iid|ssd|sed)$/i.test(n)).map((n) => dir + n);
}

const errorsOf = (schema: Parameters<typeof Value.Errors>[0], value: unknown) =>
  JSON.stringify([...Value.Errors(schema, value)].slice(0, 3).map((e) => `${e.path}: ${e.message}`));

t.test("every SCL file's report, tree and stored parts match the API's schemas", async (t) => {
  const files = [...(await filesOf(own)), ...(await filesOf(shared))];
  t.ok(files.length >= 5, `${files.length} files`);
  for (const file of files) {
    const result = await parseScl(await readFile(file));
    t.ok(Value.Check(SclParseReport, result.report), `${file}: report ${errorsOf(SclParseReport, result.report)}`);
    if (!result.ok) continue;
    const tree = toBrowseTree(result.model);
    t.ok(Value.Check(SclBrowseTree, tree), `${file}: tree ${errorsOf(SclBrowseTree, tree)}`);
    for (const part of browseParts(result.model)) {
      const asTree = part.iedName === null ? part.tree : { ...tree, ieds: [part.tree] };
      if (!Value.Check(SclBrowseTree, asTree)) t.fail(`${file}: part ${part.iedName} ${errorsOf(SclBrowseTree, asTree)}`);
    }
  }
});
