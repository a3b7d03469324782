/**
 * The walk that refuses what no service should see (`input/clean.ts`): the first fault and its JSON
 * pointer, whatever the container, the depth or the spelling of the keys; a flat body of millions of
 * elements (what 6 MiB of an animation's body holds) walked to its last element.
 */
import t from 'tap';
import { findFault, maxNesting } from '../src/input/clean.ts';

const nested = (depth: number): unknown => {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
};

t.test('the first fault and where it is', async (t) => {
  t.equal(findFault({ a: [1, 'ok', { b: null }], c: true }, '/body'), null);
  t.equal(findFault('plain', '/body'), null);
  t.same(findFault('a\u0000b', '/body'), { path: '/body', message: 'holds the character U+0000' });
  t.same(findFault('\ud800', ''), { path: '/', message: 'holds an unpaired surrogate' });
  t.same(findFault({ items: [{ name: 'x' }, { name: 'y\u0000' }] }, '/body'), {
    path: '/body/items/1/name',
    message: 'holds the character U+0000',
  });
  t.same(findFault({ 'a/b': { 'c~d': ['\udc00'] } }, '/body'), { path: '/body/a~1b/c~0d/0', message: 'holds an unpaired surrogate' });
  t.same(findFault({ ok: 1, nested: { 'bad\u0000': 1 } }, '/body'), {
    path: '/body/nested/bad\u0000',
    message: 'has a name that holds the character U+0000',
  });
  t.same(
    findFault(JSON.parse('{"__proto__": {"x": "\\u0000"}}'), '/body'),
    {
      path: '/body/__proto__/x',
      message: 'holds the character U+0000',
    },
    'an own __proto__ is walked as any key',
  );
});

t.test(`nesting: ${maxNesting} levels pass, one more is a fault`, async (t) => {
  t.equal(findFault(nested(maxNesting), '/body'), null);
  const fault = findFault(nested(maxNesting + 1), '/body');
  t.equal(fault?.message, `nests deeper than ${maxNesting} levels`);
  t.equal(fault?.path, `/body${'/a'.repeat(maxNesting)}`);
});

t.test('a flat body of millions of elements is walked, its fault at the end found', async (t) => {
  const elements = 3 * 1024 * 1024;
  const value: unknown[] = new Array(elements).fill(0);
  t.equal(findFault(value, '/body'), null);
  value[elements - 1] = '\u0000';
  t.same(findFault({ list: value }, '/body'), { path: `/body/list/${elements - 1}`, message: 'holds the character U+0000' });
});
