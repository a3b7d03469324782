/**
 * Every operation of the config service over the bus, as an editor of one space: each resource is
 * created, read, listed, replaced and deleted, with audit fields from the caller and events after each
 * committed change.
 */
import * as ops from '@scada/contracts';
import t from 'tap';
import { bodies, eventually, startHarnesses } from './harness.ts';

const harnesses = await startHarnesses(t);

for (const h of harnesses) {
  t.test(`configuration resources (${h.name})`, async (t) => {
    t.test('a project is created, read, listed, replaced and deleted, with audit fields from the caller', async (t) => {
      const alice = h.as(undefined, 'alice');
      const before = Date.now();
      const created = await alice.call(ops.createProject, {
        body: { name: 'Water plant', isActive: true, dsc: 'North site', latitude: 41.5, longitude: -8.25, properties: '{"a":1}' },
      });
      t.match(created, {
        name: 'Water plant',
        isActive: true,
        dsc: 'North site',
        latitude: 41.5,
        longitude: -8.25,
        createdBy: 'alice',
        lastModifiedBy: 'alice',
      });
      t.match(created.id, /^[0-9a-f-]{36}$/, 'a lower-case UUID');
      t.ok(
        Date.parse(created.creationDate) >= before - 1000 && Date.parse(created.creationDate) <= Date.now() + 1000,
        'dated by the service clock',
      );
      t.notOk('address' in created, 'an optional field not set is omitted');
      t.same(await alice.call(ops.getProject, { params: { projectId: created.id } }), created);
      t.same(await alice.call(ops.getProject, { params: { projectId: created.id.toUpperCase() } }), created, 'ids are case-insensitive');

      const bob = { ...h.as(alice.space, 'bob') };
      await bob.call(ops.updateProject, {
        params: { projectId: created.id },
        body: { name: 'Water plant 2', isActive: false, address: 'Main st' },
      });
      const updated = await alice.call(ops.getProject, { params: { projectId: created.id } });
      t.match(updated, {
        name: 'Water plant 2',
        isActive: false,
        address: 'Main st',
        createdBy: 'alice',
        lastModifiedBy: 'bob',
        creationDate: created.creationDate,
      });
      t.notOk('dsc' in updated, 'a replacement clears the optional fields it leaves out');
      t.same(
        (await alice.call(ops.getProjects)).map((p) => p.id),
        [created.id],
      );

      t.equal(await alice.call(ops.deleteProject, { params: { projectId: created.id } }), null);
      await t.rejects(alice.call(ops.getProject, { params: { projectId: created.id } }), { code: 'not_found', status: 404 });
      t.same(await alice.call(ops.getProjects), []);
    });

    t.test('null stands for a field that is not set, in a create as in a replacement', async (t) => {
      const c = h.as();
      const p = await c.call(ops.createProject, { body: { name: 'P', isActive: true, dsc: null, latitude: null } });
      t.notOk('dsc' in p || 'latitude' in p);
    });

    t.test('board groups and boards: createBoard answers the board; lists follow the documented order', async (t) => {
      const c = h.as();
      const g1 = await c.call(ops.createBoardGroup, { body: { name: 'Zeta', rank: 1, color: '#A0b1C2' } });
      const g2 = await c.call(ops.createBoardGroup, { body: { name: 'Alpha', rank: 2 } });
      const g3 = await c.call(ops.createBoardGroup, { body: { name: 'Beta' } });
      const g4 = await c.call(ops.createBoardGroup, { body: { name: 'Gamma', rank: 1 } });
      t.same(
        (await c.call(ops.getBoardGroups)).map((g) => g.name),
        ['Gamma', 'Zeta', 'Alpha', 'Beta'],
        'rank, then name, unranked last',
      );
      t.match(await c.call(ops.getBoardGroup, { params: { boardGroupId: g1.id } }), { name: 'Zeta', rank: 1, color: '#A0b1C2' });
      await c.call(ops.updateBoardGroup, { params: { boardGroupId: g3.id }, body: { name: 'Beta', rank: 0 } });
      t.equal((await c.call(ops.getBoardGroups))[0]?.id, g3.id);

      const board = await c.call(ops.createBoard, {
        params: { boardGroupId: g1.id },
        body: {
          name: 'Overview',
          type: 'Iframe',
          header: true,
          x: 0,
          y: 0,
          width: 1,
          height: 2147483647,
          iframeUrl: 'https://hmi.example/view?a=1',
        },
      });
      t.match(board, {
        boardGroupId: g1.id,
        name: 'Overview',
        type: 'Iframe',
        header: true,
        x: 0,
        width: 1,
        height: 2147483647,
        createdBy: 'editor-1',
      });
      const html = await c.call(ops.createBoard, {
        params: { boardGroupId: g1.id },
        body: { name: 'Alarms', type: 'Html', header: false, customHtmlId: 'h-1' },
      });
      t.same(
        (await c.call(ops.getBoards, { params: { boardGroupId: g1.id } })).map((b) => b.name),
        ['Alarms', 'Overview'],
      );
      t.same(await c.call(ops.getBoards, { params: { boardGroupId: g2.id } }), [], 'another group has none');
      t.same(await c.call(ops.getBoard, { params: { boardGroupId: g1.id, boardId: board.id } }), board);
      await t.rejects(
        c.call(ops.getBoard, { params: { boardGroupId: g2.id, boardId: board.id } }),
        { code: 'not_found' },
        'a board is read through its own group',
      );

      await c.call(ops.updateBoard, {
        params: { boardGroupId: g1.id, boardId: html.id },
        body: { name: 'Alarms', type: 'Animation', header: true, animationId: 'anim-7', animationParams: '{}' },
      });
      t.match(await c.call(ops.getBoard, { params: { boardGroupId: g1.id, boardId: html.id } }), {
        type: 'Animation',
        animationId: 'anim-7',
        boardGroupId: g1.id,
      });
      await t.rejects(
        c.call(ops.updateBoard, { params: { boardGroupId: g2.id, boardId: html.id }, body: { name: 'X', type: 'Html', header: true } }),
        { code: 'not_found' },
      );
      await t.rejects(c.call(ops.deleteBoard, { params: { boardGroupId: g2.id, boardId: html.id } }), { code: 'not_found' });
      await c.call(ops.deleteBoard, { params: { boardGroupId: g1.id, boardId: html.id } });
      t.same(
        (await c.call(ops.getBoards, { params: { boardGroupId: g1.id } })).map((b) => b.id),
        [board.id],
      );
      await c.call(ops.deleteBoardGroup, { params: { boardGroupId: g4.id } });
      t.equal((await c.call(ops.getBoardGroups)).length, 3);
    });

    t.test('faceplates and placeholders', async (t) => {
      const c = h.as();
      const project = await c.call(ops.createProject, { body: bodies.project('P1') });
      const other = await c.call(ops.createProject, { body: bodies.project('P2') });
      const fp = await c.call(ops.createFaceplate, {
        body: { name: 'Pump', projectId: project.id, color: '#00ff00', dsc: 'd', svgFileId: 'svg-1' },
      });
      t.match(fp, { name: 'Pump', projectId: project.id, color: '#00ff00', svgFileId: 'svg-1' });
      const fp2 = await c.call(ops.createFaceplate, { body: bodies.faceplate('Pump', other.id) });
      t.same(
        (await c.call(ops.getFaceplates)).map((f) => f.id),
        [fp, fp2].map((f) => f.id).sort(),
        'same name in two projects, ordered by name then id',
      );
      await c.call(ops.updateFaceplate, { params: { faceplateId: fp2.id }, body: { name: 'Valve', projectId: project.id } });
      t.match(
        await c.call(ops.getFaceplate, { params: { faceplateId: fp2.id } }),
        { name: 'Valve', projectId: project.id },
        'moved to another project',
      );

      const ph = await c.call(ops.createFaceplatePlaceholder, {
        params: { faceplateId: fp.id },
        body: { name: 'speed', type: 'number', order: 2, group: 'g', props: '{}', dsc: 'rpm' },
      });
      t.match(ph, { faceplateId: fp.id, name: 'speed', type: 'number', order: 2, group: 'g' });
      await c.call(ops.createFaceplatePlaceholder, {
        params: { faceplateId: fp.id },
        body: { name: 'tag', type: 'tag', order: -2147483648 },
      });
      await c.call(ops.createFaceplatePlaceholder, { params: { faceplateId: fp.id }, body: { name: 'a-label', type: 'text' } });
      t.same(
        (await c.call(ops.getFaceplatePlaceholders, { params: { faceplateId: fp.id } })).map((p) => p.name),
        ['tag', 'speed', 'a-label'],
        'by order, unordered last',
      );
      t.same(await c.call(ops.getFaceplatePlaceholder, { params: { faceplateId: fp.id, placeholderId: ph.id } }), ph);
      t.equal(
        await c.call(ops.updateFaceplatePlaceholder, {
          params: { faceplateId: fp.id, placeholderId: ph.id },
          body: { name: 'speed', type: 'combo' },
        }),
        null,
      );
      t.match(await c.call(ops.getFaceplatePlaceholder, { params: { faceplateId: fp.id, placeholderId: ph.id } }), { type: 'combo' });
      await t.rejects(c.call(ops.getFaceplatePlaceholder, { params: { faceplateId: fp2.id, placeholderId: ph.id } }), {
        code: 'not_found',
      });
      await c.call(ops.deleteFaceplatePlaceholder, { params: { faceplateId: fp.id, placeholderId: ph.id } });
      t.equal((await c.call(ops.getFaceplatePlaceholders, { params: { faceplateId: fp.id } })).length, 2);
      await c.call(ops.deleteFaceplate, { params: { faceplateId: fp2.id } });
      t.same(
        (await c.call(ops.getFaceplates)).map((f) => f.id),
        [fp.id],
      );
    });

    t.test('scripts: created, replaced, code replaced alone, read back exactly', async (t) => {
      const c = h.as();
      const project = await c.call(ops.createProject, { body: bodies.project('Plant') });
      const s = await c.call(ops.createScript, {
        body: {
          name: 'tick',
          projectId: project.id,
          type: 'Periodic',
          log: true,
          code: 'let x = 1;\r\n',
          period: 100,
          delay: 0,
          dsc: 'every 100 ms',
        },
      });
      t.match(s, { name: 'tick', projectId: project.id, type: 'Periodic', log: true, code: 'let x = 1;\r\n', period: 100, delay: 0 });
      await c.call(ops.updateScript, {
        params: { scriptId: s.id },
        body: { name: 'tick', projectId: project.id, type: 'Once', log: false, code: 'x', time: '2030-01-02T03:04:05.678+01:00' },
      });
      t.match(await c.call(ops.getScript, { params: { scriptId: s.id } }), { type: 'Once', code: 'x', time: '2030-01-02T02:04:05.678Z' });

      const code = '\uFEFF// ünïcødé 😀\u0000\r\nend';
      t.equal(await c.call(ops.updateScriptCode, { params: { scriptId: s.id }, body: code }), null);
      const read = await c.call(ops.getScript, { params: { scriptId: s.id } });
      t.equal(read.code, code, 'BOM, NUL, astral characters and CRLF kept');
      t.match(read, { type: 'Once', name: 'tick' }, 'the other fields are untouched');
      await c.call(ops.updateScriptCode, { params: { scriptId: s.id }, body: '' });
      t.equal((await c.call(ops.getScript, { params: { scriptId: s.id } })).code, '', 'an empty script is allowed');
      await c.call(ops.updateScriptCode, { params: { scriptId: s.id }, body: '😀'.repeat(65535) });
      t.equal(
        (await c.call(ops.getScript, { params: { scriptId: s.id } })).code.length,
        131070,
        '65,535 characters, counted as code points',
      );
      t.same(
        (await c.call(ops.getScripts)).map((x) => x.id),
        [s.id],
      );
      await c.call(ops.deleteScript, { params: { scriptId: s.id } });
      t.same(await c.call(ops.getScripts), []);
    });

    t.test('each committed change publishes events.config.<entity>.<verb> with space, id and actor', async (t) => {
      const events = await h.events();
      t.teardown(() => events.stop());
      const c = h.as(undefined, 'carol');
      const project = await c.call(ops.createProject, { body: bodies.project('E') });
      const group = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('G') });
      const board = await c.call(ops.createBoard, { params: { boardGroupId: group.id }, body: bodies.board('B') });
      const fp = await c.call(ops.createFaceplate, { body: bodies.faceplate('F', project.id) });
      const ph = await c.call(ops.createFaceplatePlaceholder, { params: { faceplateId: fp.id }, body: bodies.placeholder('P') });
      const script = await c.call(ops.createScript, { body: bodies.script('S', project.id) });
      await c.call(ops.updateFaceplatePlaceholder, {
        params: { faceplateId: fp.id, placeholderId: ph.id },
        body: bodies.placeholder('P2'),
      });
      await c.call(ops.updateScriptCode, { params: { scriptId: script.id }, body: 'x' });
      await c.call(ops.deleteBoard, { params: { boardGroupId: group.id, boardId: board.id } });
      await t.rejects(c.call(ops.deleteProject, { params: { projectId: project.id } }), { code: 'conflict' });
      const expected = [
        ['events.config.project.created', project.id],
        ['events.config.board_group.created', group.id],
        ['events.config.board.created', board.id],
        ['events.config.faceplate.created', fp.id],
        ['events.config.placeholder.created', ph.id],
        ['events.config.script.created', script.id],
        ['events.config.placeholder.updated', ph.id],
        ['events.config.script.updated', script.id],
        ['events.config.board.deleted', board.id],
      ];
      const mine = () => events.seen.filter((e) => e.body.space === c.space);
      t.ok(await eventually(() => mine().length >= expected.length), 'every event arrives');
      await new Promise((r) => setTimeout(r, 50));
      t.same(
        mine().map((e) => [e.subject, e.body.id]),
        expected,
        'in order, none for a refused change',
      );
      for (const e of mine()) t.match(e.body, { space: c.space, actor: 'carol', at: String });
    });
  });
}
