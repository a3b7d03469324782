/**
 * Tenant isolation, parents and names: a resource of another space does not exist for the caller
 * whatever the id, no row can hang under another space's parent, a parent with children is refused
 * with 409 naming them, duplicate names are 409, concurrent replacements of one placeholder all succeed
 * and the last committed wins.
 */
import * as ops from '@scada/contracts';
import type { Operation } from '@scada/contracts';
import { call } from '@scada/platform';
import t from 'tap';
import { actorIn, bodies, startHarnesses, type Caller, type CallInput } from './harness.ts';

const harnesses = await startHarnesses(t);

/** One of each resource in a space. */
async function fullSpace(c: Caller) {
  const project = await c.call(ops.createProject, { body: bodies.project('Shared name') });
  const group = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('Shared name') });
  const board = await c.call(ops.createBoard, { params: { boardGroupId: group.id }, body: bodies.board('Shared name') });
  const faceplate = await c.call(ops.createFaceplate, { body: bodies.faceplate('Shared name', project.id) });
  const placeholder = await c.call(ops.createFaceplatePlaceholder, {
    params: { faceplateId: faceplate.id },
    body: bodies.placeholder('Shared name'),
  });
  const script = await c.call(ops.createScript, { body: { ...bodies.script('Shared name', project.id), code: 'secret()' } });
  return { project, group, board, faceplate, placeholder, script };
}

const codeOf = (c: Caller, op: Operation, input: CallInput) =>
  c.call(op, input).then(
    () => 'ok',
    (err) => (err as { code: string }).code,
  );

for (const h of harnesses) {
  t.test(`isolation, parents and names (${h.name})`, async (t) => {
    t.test('a resource of another space is 404 from every operation, and no change reaches it', async (t) => {
      const a = h.as(undefined, 'alice');
      const b = h.as(undefined, 'bob');
      const own = await fullSpace(a);
      const theirs = await fullSpace(b);
      const snapshot = async () => [
        await b.call(ops.getProjects),
        await b.call(ops.getBoardGroups),
        await b.call(ops.getBoards, { params: { boardGroupId: theirs.group.id } }),
        await b.call(ops.getFaceplates),
        await b.call(ops.getFaceplatePlaceholders, { params: { faceplateId: theirs.faceplate.id } }),
        await b.call(ops.getScripts),
      ];
      const before = await snapshot();
      const x = theirs;
      const attempts: [Operation, CallInput][] = [
        [ops.getProject, { params: { projectId: x.project.id } }],
        [ops.updateProject, { params: { projectId: x.project.id }, body: bodies.project('mine') }],
        [ops.deleteProject, { params: { projectId: x.project.id } }],
        [ops.getBoardGroup, { params: { boardGroupId: x.group.id } }],
        [ops.updateBoardGroup, { params: { boardGroupId: x.group.id }, body: bodies.boardGroup('mine') }],
        [ops.deleteBoardGroup, { params: { boardGroupId: x.group.id } }],
        [ops.getBoards, { params: { boardGroupId: x.group.id } }],
        [ops.createBoard, { params: { boardGroupId: x.group.id }, body: bodies.board('intruder') }],
        [ops.getBoard, { params: { boardGroupId: x.group.id, boardId: x.board.id } }],
        [ops.getBoard, { params: { boardGroupId: own.group.id, boardId: x.board.id } }],
        [ops.updateBoard, { params: { boardGroupId: x.group.id, boardId: x.board.id }, body: bodies.board('mine') }],
        [ops.deleteBoard, { params: { boardGroupId: x.group.id, boardId: x.board.id } }],
        [ops.getFaceplate, { params: { faceplateId: x.faceplate.id } }],
        [ops.updateFaceplate, { params: { faceplateId: x.faceplate.id }, body: bodies.faceplate('mine', own.project.id) }],
        [ops.updateFaceplate, { params: { faceplateId: own.faceplate.id }, body: bodies.faceplate('moved', x.project.id) }],
        [ops.deleteFaceplate, { params: { faceplateId: x.faceplate.id } }],
        [ops.createFaceplate, { body: bodies.faceplate('intruder', x.project.id) }],
        [ops.getFaceplatePlaceholders, { params: { faceplateId: x.faceplate.id } }],
        [ops.createFaceplatePlaceholder, { params: { faceplateId: x.faceplate.id }, body: bodies.placeholder('intruder') }],
        [ops.getFaceplatePlaceholder, { params: { faceplateId: x.faceplate.id, placeholderId: x.placeholder.id } }],
        [ops.getFaceplatePlaceholder, { params: { faceplateId: own.faceplate.id, placeholderId: x.placeholder.id } }],
        [
          ops.updateFaceplatePlaceholder,
          { params: { faceplateId: x.faceplate.id, placeholderId: x.placeholder.id }, body: bodies.placeholder('mine') },
        ],
        [ops.deleteFaceplatePlaceholder, { params: { faceplateId: x.faceplate.id, placeholderId: x.placeholder.id } }],
        [ops.getScript, { params: { scriptId: x.script.id } }],
        [ops.updateScript, { params: { scriptId: x.script.id }, body: bodies.script('mine', own.project.id) }],
        [ops.updateScript, { params: { scriptId: own.script.id }, body: bodies.script('moved', x.project.id) }],
        [ops.updateScriptCode, { params: { scriptId: x.script.id }, body: 'stolen()' }],
        [ops.deleteScript, { params: { scriptId: x.script.id } }],
        [ops.createScript, { body: bodies.script('intruder', x.project.id) }],
      ];
      for (const [op, input] of attempts)
        t.equal(await codeOf(a, op, input), 'not_found', `${op.operationId} ${JSON.stringify(input.params ?? input.body)}`);
      t.same(await snapshot(), before, 'the other space is unchanged');
      t.same(
        (await a.call(ops.getProjects)).map((p) => p.id),
        [own.project.id],
        'lists show only the own space',
      );
      t.same(
        (await a.call(ops.getScripts)).map((p) => p.code),
        ['secret()'],
      );
      t.equal((await a.call(ops.getScripts))[0]?.id, own.script.id);
    });

    t.test('a service call without a space is 400 bad_header; a change without a caller is 401', async (t) => {
      const noSpace = await call(h.bus, ops.getProjects, { params: {}, query: {} }, { requestId: 'r1', actor: actorIn('s', 'x') }).catch(
        (e) => e,
      );
      t.match(noSpace, { code: 'bad_header', status: 400 });
      const noActor = await call(
        h.bus,
        ops.createProject,
        { params: {}, query: {}, body: bodies.project('P') },
        { requestId: 'r2', space: 'space-x' },
      ).catch((e) => e);
      t.match(noActor, { code: 'unauthenticated', status: 401 });
    });

    t.test('a parent with children is refused with 409 naming them; without them it goes', async (t) => {
      const c = h.as();
      const all = await fullSpace(c);
      await c.call(ops.createScript, { body: bodies.script('Another', all.project.id) });
      const refusal = await c.call(ops.deleteProject, { params: { projectId: all.project.id } }).catch((e) => e);
      t.match(refusal, {
        code: 'conflict',
        status: 409,
        detail: /1 faceplate \(Shared name\) and 2 scripts \(Another, Shared name\)/,
        extensions: {
          children: [
            { entity: 'faceplate', count: 1, names: ['Shared name'] },
            { entity: 'script', count: 2, names: ['Another', 'Shared name'] },
          ],
        },
      });
      t.match(await c.call(ops.deleteBoardGroup, { params: { boardGroupId: all.group.id } }).catch((e) => e), {
        code: 'conflict',
        detail: /1 board/,
      });
      t.match(await c.call(ops.deleteFaceplate, { params: { faceplateId: all.faceplate.id } }).catch((e) => e), {
        code: 'conflict',
        detail: /1 placeholder/,
      });
      t.ok(await c.call(ops.getProject, { params: { projectId: all.project.id } }), 'nothing was deleted');

      await c.call(ops.deleteFaceplatePlaceholder, { params: { faceplateId: all.faceplate.id, placeholderId: all.placeholder.id } });
      await c.call(ops.deleteFaceplate, { params: { faceplateId: all.faceplate.id } });
      for (const s of await c.call(ops.getScripts)) await c.call(ops.deleteScript, { params: { scriptId: s.id } });
      await c.call(ops.deleteProject, { params: { projectId: all.project.id } });
      await c.call(ops.deleteBoard, { params: { boardGroupId: all.group.id, boardId: all.board.id } });
      await c.call(ops.deleteBoardGroup, { params: { boardGroupId: all.group.id } });
      t.same(
        [await c.call(ops.getProjects), await c.call(ops.getBoardGroups), await c.call(ops.getFaceplates), await c.call(ops.getScripts)],
        [[], [], [], []],
      );
    });

    t.test('boards created while their group is deleted never end up orphans', async (t) => {
      const c = h.as();
      const group = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('Racing') });
      const creates = Array.from({ length: 10 }, (_, i) =>
        codeOf(c, ops.createBoard, { params: { boardGroupId: group.id }, body: bodies.board(`b${i}`) }),
      );
      const removal = codeOf(c, ops.deleteBoardGroup, { params: { boardGroupId: group.id } });
      const [outcomes, removed] = [await Promise.all(creates), await removal];
      t.ok(
        outcomes.every((o) => o === 'ok' || o === 'not_found'),
        outcomes.join(' '),
      );
      t.ok(removed === 'ok' || removed === 'conflict', removed);
      const { rows } = await h.store.query<{ n: number }>(
        `select count(*)::int as n from config.boards b where b.space = $1 and not exists
           (select 1 from config.board_groups g where g.space = b.space and g.id = b.group_id)`,
        [c.space],
      );
      t.equal(Number(rows[0]?.n), 0, 'no board without its group');
    });

    t.test('names are unique per parent: duplicates are 409, the same name elsewhere is fine', async (t) => {
      const c = h.as();
      const all = await fullSpace(c);
      const other = await c.call(ops.createProject, { body: bodies.project('Other') });
      const g2 = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('Other') });
      const f2 = await c.call(ops.createFaceplate, { body: bodies.faceplate('Other', all.project.id) });
      const dup = 'Shared name';
      const duplicates: [Operation, CallInput][] = [
        [ops.createProject, { body: bodies.project(dup) }],
        [ops.updateProject, { params: { projectId: other.id }, body: bodies.project(dup) }],
        [ops.createBoardGroup, { body: bodies.boardGroup(dup) }],
        [ops.updateBoardGroup, { params: { boardGroupId: g2.id }, body: bodies.boardGroup(dup) }],
        [ops.createBoard, { params: { boardGroupId: all.group.id }, body: bodies.board(dup) }],
        [ops.createFaceplate, { body: bodies.faceplate(dup, all.project.id) }],
        [ops.updateFaceplate, { params: { faceplateId: f2.id }, body: bodies.faceplate(dup, all.project.id) }],
        [ops.createFaceplatePlaceholder, { params: { faceplateId: all.faceplate.id }, body: bodies.placeholder(dup) }],
        [ops.createScript, { body: bodies.script(dup, all.project.id) }],
      ];
      for (const [op, input] of duplicates) t.equal(await codeOf(c, op, input), 'conflict', `${op.operationId} with a name in use`);
      const elsewhere: [Operation, CallInput][] = [
        [ops.createBoard, { params: { boardGroupId: g2.id }, body: bodies.board(dup) }],
        [ops.createFaceplate, { body: bodies.faceplate(dup, other.id) }],
        [ops.createFaceplatePlaceholder, { params: { faceplateId: f2.id }, body: bodies.placeholder(dup) }],
        [ops.createScript, { body: bodies.script(dup, other.id) }],
        [ops.createProject, { body: bodies.project(dup.toLowerCase()) }],
        [ops.updateProject, { params: { projectId: all.project.id }, body: { ...bodies.project(dup), dsc: 'same name, kept' } }],
      ];
      for (const [op, input] of elsewhere)
        t.equal(await codeOf(c, op, input), 'ok', `${op.operationId} in another parent, or another case`);
      t.equal(await codeOf(h.as(), ops.createProject, { body: bodies.project(dup) }), 'ok', 'another space may use the name');
    });

    t.test('concurrent replacements of one placeholder all answer 204 and the last committed wins', async (t) => {
      const c = h.as();
      const f = await c.call(ops.createFaceplate, {
        body: bodies.faceplate('F', (await c.call(ops.createProject, { body: bodies.project('P') })).id),
      });
      const ph = await c.call(ops.createFaceplatePlaceholder, { params: { faceplateId: f.id }, body: bodies.placeholder('speed') });
      const params = { faceplateId: f.id, placeholderId: ph.id };
      const writers = Array.from({ length: 12 }, (_, i) => h.as(c.space, `writer-${i}`));
      const results = await Promise.all(
        writers.map((w, i) =>
          w.call(ops.updateFaceplatePlaceholder, { params, body: { name: 'speed', type: 'number', dsc: `v${i}`, order: i } }),
        ),
      );
      t.same(
        results,
        writers.map(() => null),
        'every one answers 204',
      );
      const final = await c.call(ops.getFaceplatePlaceholder, { params });
      const i = Number(String(final.dsc).slice(1));
      t.match(final, { dsc: `v${i}`, order: i, lastModifiedBy: `writer-${i}` }, 'one whole replacement won, never a mix');
      t.ok(final.lastModifiedDate >= ph.lastModifiedDate);
    });
  });
}
