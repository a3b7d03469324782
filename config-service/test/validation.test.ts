/**
 * Bad input is refused by the service with 400 `validation_failed` naming the field, before anything is
 * stored: missing required fields, wrong types, int32 bounds, lengths counted in Unicode characters,
 * URLs, colours, enums, unknown fields and malformed ids. Unknown ids are 404.
 */
import * as ops from '@scada/contracts';
import type { Operation } from '@scada/contracts';
import t from 'tap';
import { bodies, startHarnesses, type Caller, type CallInput } from './harness.ts';

const harnesses = await startHarnesses(t);
const missingId = '00000000-0000-4000-8000-000000000000';

/** The body operations of each resource, a valid message for them, and the fields their rules cover. */
type Case = {
  label: string;
  create: Operation;
  update: Operation;
  /** A valid message for create, and the params of an update of an existing entity. */
  arrange(c: Caller): Promise<{ create: CallInput; updateParams: Record<string, string> }>;
  required: string[];
  /** int32 fields and their minimum. */
  ints: [string, number][];
};

async function projectOf(c: Caller): Promise<string> {
  return (await c.call(ops.createProject, { body: bodies.project(`p-${Math.random()}`) })).id;
}

const cases: Case[] = [
  {
    label: 'project',
    create: ops.createProject,
    update: ops.updateProject,
    required: ['name', 'isActive'],
    ints: [],
    arrange: async (c) => ({ create: { body: bodies.project('A') }, updateParams: { projectId: await projectOf(c) } }),
  },
  {
    label: 'board group',
    create: ops.createBoardGroup,
    update: ops.updateBoardGroup,
    required: ['name'],
    ints: [['rank', 0]],
    arrange: async (c) => {
      const g = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('G') });
      return { create: { body: { name: 'A', rank: 0 } }, updateParams: { boardGroupId: g.id } };
    },
  },
  {
    label: 'board',
    create: ops.createBoard,
    update: ops.updateBoard,
    required: ['name', 'type', 'header'],
    ints: [
      ['x', 0],
      ['y', 0],
      ['width', 1],
      ['height', 1],
    ],
    arrange: async (c) => {
      const g = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('G') });
      const b = await c.call(ops.createBoard, { params: { boardGroupId: g.id }, body: bodies.board('B') });
      return { create: { params: { boardGroupId: g.id }, body: bodies.board('A') }, updateParams: { boardGroupId: g.id, boardId: b.id } };
    },
  },
  {
    label: 'faceplate',
    create: ops.createFaceplate,
    update: ops.updateFaceplate,
    required: ['name', 'projectId'],
    ints: [],
    arrange: async (c) => {
      const p = await projectOf(c);
      const f = await c.call(ops.createFaceplate, { body: bodies.faceplate('F', p) });
      return { create: { body: bodies.faceplate('A', p) }, updateParams: { faceplateId: f.id } };
    },
  },
  {
    label: 'placeholder',
    create: ops.createFaceplatePlaceholder,
    update: ops.updateFaceplatePlaceholder,
    required: ['name', 'type'],
    ints: [['order', -(2 ** 31)]],
    arrange: async (c) => {
      const f = await c.call(ops.createFaceplate, { body: bodies.faceplate('F', await projectOf(c)) });
      const ph = await c.call(ops.createFaceplatePlaceholder, { params: { faceplateId: f.id }, body: bodies.placeholder('P') });
      return {
        create: { params: { faceplateId: f.id }, body: bodies.placeholder('A') },
        updateParams: { faceplateId: f.id, placeholderId: ph.id },
      };
    },
  },
  {
    label: 'script',
    create: ops.createScript,
    update: ops.updateScript,
    required: ['name', 'projectId', 'type', 'log', 'code'],
    ints: [
      ['delay', 0],
      ['period', 100],
    ],
    arrange: async (c) => {
      const p = await projectOf(c);
      const s = await c.call(ops.createScript, { body: bodies.script('S', p) });
      return { create: { body: bodies.script('A', p) }, updateParams: { scriptId: s.id } };
    },
  },
];

/** Calls `op` with `body` in place of the valid one; answers the problem's field paths (none when it passed). */
async function refusal(
  c: Caller,
  op: Operation,
  input: CallInput,
  body: Record<string, unknown>,
): Promise<{ code?: string; paths: string[] }> {
  try {
    await c.call(op, { ...input, body });
    return { paths: [] };
  } catch (err) {
    const e = err as { code?: string; errors?: { path: string }[] };
    return { code: e.code, paths: (e.errors ?? []).map((x) => x.path) };
  }
}

for (const h of harnesses) {
  t.test(`bad input (${h.name})`, async (t) => {
    for (const k of cases) {
      t.test(`${k.label}: every required field missing in turn, wrong types, int32 bounds, long names, unknown fields`, async (t) => {
        const c = h.as();
        const { create, updateParams } = await k.arrange(c);
        const valid = create.body as Record<string, unknown>;
        const both: [Operation, CallInput][] = [
          [k.create, create],
          [k.update, { params: updateParams }],
        ];
        for (const [op, input] of both) {
          for (const field of k.required) {
            const { [field]: _dropped, ...rest } = valid;
            t.same(
              await refusal(c, op, input, rest),
              { code: 'validation_failed', paths: [`/body/${field}`] },
              `${op.operationId} without ${field}`,
            );
          }
          for (const [field, min] of k.ints) {
            for (const bad of [2 ** 31, min - 1, '1', 1.5]) {
              t.same(
                await refusal(c, op, input, { ...valid, [field]: bad }),
                { code: 'validation_failed', paths: [`/body/${field}`] },
                `${op.operationId} ${field}=${JSON.stringify(bad)}`,
              );
            }
            t.same(
              await refusal(c, op, input, { ...valid, name: `${op.operationId}-${field}`, [field]: 2 ** 31 - 1 }),
              { paths: [] },
              `${field} = 2^31-1 passes`,
            );
          }
          t.same(
            await refusal(c, op, input, { ...valid, name: 'n'.repeat(101) }),
            { code: 'validation_failed', paths: ['/body/name'] },
            '101 characters',
          );
          t.same(
            await refusal(c, op, input, { ...valid, name: '' }),
            { code: 'validation_failed', paths: ['/body/name'] },
            'an empty name',
          );
          t.same(
            await refusal(c, op, input, { ...valid, name: 'a\u0000b' }),
            { code: 'validation_failed', paths: ['/body/name'] },
            'a NUL character',
          );
          t.same(
            await refusal(c, op, input, { ...valid, surprise: 1 }),
            { code: 'validation_failed', paths: ['/body/surprise'] },
            'an unknown field',
          );
          t.same(
            await refusal(c, op, input, { ...valid, name: 7 }),
            { code: 'validation_failed', paths: ['/body/name'] },
            'a number for a string',
          );
        }
        t.same(await refusal(c, k.create, create, { ...valid, name: '😀'.repeat(100) }), { paths: [] }, '100 emoji are 100 characters');
      });
    }

    t.test('wrong types, enums, URLs and colours name the field', async (t) => {
      const c = h.as();
      const g = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('G') });
      const input = { params: { boardGroupId: g.id } };
      const board = bodies.board('B');
      const refusedAt = async (op: Operation, inp: CallInput, body: Record<string, unknown>, path: string, why: string) =>
        t.same(await refusal(c, op, inp, body), { code: 'validation_failed', paths: [path] }, why);
      await refusedAt(ops.createBoard, input, { ...board, x: '1' }, '/body/x', '"x": "1"');
      await refusedAt(ops.createBoard, input, { ...board, header: 'yes' }, '/body/header', '"header": "yes"');
      await refusedAt(ops.createBoard, input, { ...board, type: 'Video' }, '/body/type', 'unknown board type');
      await refusedAt(ops.createBoard, input, { ...board, type: 'html' }, '/body/type', 'enums are case-sensitive');
      for (const url of [
        'javascript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'JavaScript:alert(1)',
        'ftp://x.example/',
        '/relative',
        '',
      ]) {
        await refusedAt(ops.createBoard, input, { ...board, iframeUrl: url }, '/body/iframeUrl', `iframeUrl ${url}`);
      }
      await refusedAt(
        ops.createBoard,
        input,
        { ...board, iframeUrl: `https://x.example/${'a'.repeat(2031)}` },
        '/body/iframeUrl',
        'a URL over 2048 characters',
      );
      for (const color of ['red', '#12345', '#1234567', '#gggggg', '123456']) {
        await refusedAt(ops.createBoardGroup, {}, { name: 'C', color }, '/body/color', `colour ${color}`);
      }
      await refusedAt(ops.createProject, {}, { name: 'P', isActive: 'true' }, '/body/isActive', 'a string for a boolean');
      await refusedAt(ops.createProject, {}, { name: 'P', isActive: true, dsc: 'd'.repeat(256) }, '/body/dsc', '256-character description');
      const p = await projectOf(c);
      const f = await c.call(ops.createFaceplate, { body: bodies.faceplate('F', p) });
      await refusedAt(
        ops.createFaceplatePlaceholder,
        { params: { faceplateId: f.id } },
        { name: 'P', type: 'slider' },
        '/body/type',
        'unknown placeholder type',
      );
      await refusedAt(ops.createScript, {}, { ...bodies.script('S', p), type: 'Hourly' }, '/body/type', 'unknown script type');
      await refusedAt(ops.createScript, {}, { ...bodies.script('S', p), time: 'tomorrow' }, '/body/time', 'a time that is not ISO 8601');
      await refusedAt(ops.createFaceplate, {}, { name: 'F', projectId: 'not-a-uuid' }, '/body/projectId', 'a malformed project id');
      const e = await c.call(ops.createBoard, { ...input, body: { ...board, x: '1' } }).catch((err: unknown) => err);
      t.match(e, { status: 400, errors: [{ path: '/body/x', message: 'Expected integer' }] }, 'the message says what was expected');
    });

    t.test('script code: 65,535 characters pass, 65,536 do not, counted in Unicode characters', async (t) => {
      const c = h.as();
      const p = await projectOf(c);
      const s = await c.call(ops.createScript, { body: { ...bodies.script('S', p), code: 'a'.repeat(65535) } });
      t.equal(s.code.length, 65535);
      t.same(await refusal(c, ops.createScript, {}, { ...bodies.script('T', p), code: 'a'.repeat(65536) }), {
        code: 'validation_failed',
        paths: ['/body/code'],
      });
      const code = (body: string) =>
        c.call(ops.updateScriptCode, { params: { scriptId: s.id }, body }).then(
          () => 'ok',
          (err) => (err as { code: string }).code,
        );
      t.equal(await code('a'.repeat(65536)), 'validation_failed', '65,536 characters');
      t.equal(await code('😀'.repeat(65536)), 'validation_failed', '65,536 astral characters');
      t.equal(await code('😀'.repeat(65535)), 'ok', '65,535 astral characters (131,070 UTF-16 units)');
      t.equal(await code('\ud800 lone surrogate'), 'validation_failed', 'text that has no UTF-8 form');
      t.equal(
        await c.call(ops.updateScriptCode, { params: { scriptId: s.id }, body: 42 as never }).catch((err) => err.code),
        'validation_failed',
        'a number',
      );
    });

    t.test('malformed ids are 400; ids that do not exist are 404, on every operation that takes one', async (t) => {
      const c = h.as();
      const p = await projectOf(c);
      const g = await c.call(ops.createBoardGroup, { body: bodies.boardGroup('G') });
      const f = await c.call(ops.createFaceplate, { body: bodies.faceplate('F', p) });
      const withIds = (ids: Record<string, string>): [Operation, CallInput][] => [
        [ops.getProject, { params: { projectId: ids.p } }],
        [ops.updateProject, { params: { projectId: ids.p }, body: bodies.project('x') }],
        [ops.deleteProject, { params: { projectId: ids.p } }],
        [ops.getBoardGroup, { params: { boardGroupId: ids.g } }],
        [ops.updateBoardGroup, { params: { boardGroupId: ids.g }, body: bodies.boardGroup('x') }],
        [ops.deleteBoardGroup, { params: { boardGroupId: ids.g } }],
        [ops.getBoards, { params: { boardGroupId: ids.g } }],
        [ops.createBoard, { params: { boardGroupId: ids.g }, body: bodies.board('x') }],
        [ops.getBoard, { params: { boardGroupId: g.id, boardId: ids.b } }],
        [ops.updateBoard, { params: { boardGroupId: g.id, boardId: ids.b }, body: bodies.board('x') }],
        [ops.deleteBoard, { params: { boardGroupId: g.id, boardId: ids.b } }],
        [ops.getFaceplate, { params: { faceplateId: ids.f } }],
        [ops.updateFaceplate, { params: { faceplateId: ids.f }, body: bodies.faceplate('x', p) }],
        [ops.deleteFaceplate, { params: { faceplateId: ids.f } }],
        [ops.getFaceplatePlaceholders, { params: { faceplateId: ids.f } }],
        [ops.createFaceplatePlaceholder, { params: { faceplateId: ids.f }, body: bodies.placeholder('x') }],
        [ops.getFaceplatePlaceholder, { params: { faceplateId: f.id, placeholderId: ids.ph } }],
        [ops.updateFaceplatePlaceholder, { params: { faceplateId: f.id, placeholderId: ids.ph }, body: bodies.placeholder('x') }],
        [ops.deleteFaceplatePlaceholder, { params: { faceplateId: f.id, placeholderId: ids.ph } }],
        [ops.getScript, { params: { scriptId: ids.s } }],
        [ops.updateScript, { params: { scriptId: ids.s }, body: bodies.script('x', p) }],
        [ops.deleteScript, { params: { scriptId: ids.s } }],
        [ops.updateScriptCode, { params: { scriptId: ids.s }, body: 'x' }],
        [ops.createFaceplate, { body: bodies.faceplate('x', ids.p) }],
        [ops.createScript, { body: bodies.script('x', ids.p) }],
      ];
      const outcome = (op: Operation, input: CallInput) =>
        c.call(op, input).then(
          () => 'ok',
          (err) => (err as { code: string }).code,
        );
      const malformed = { p: 'x', g: '1', b: 'not-a-uuid', f: `${missingId}0`, ph: missingId.replace(/-/g, ''), s: "' or 1=1 --" };
      for (const [op, input] of withIds(malformed))
        t.equal(await outcome(op, input), 'validation_failed', `${op.operationId} with a malformed id`);
      const absent = { p: missingId, g: missingId, b: missingId, f: missingId, ph: missingId, s: missingId };
      for (const [op, input] of withIds(absent))
        t.equal(await outcome(op, input), 'not_found', `${op.operationId} with an id that does not exist`);
    });
  });
}
