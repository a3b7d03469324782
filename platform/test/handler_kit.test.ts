import { ProblemError } from '@scada/contracts';
import t from 'tap';
import { actorOf, notFound, spaceOf } from '../src/handler_kit.ts';

t.test('spaceOf answers the space of a request, or 400 bad_header when it names none', async (t) => {
  t.equal(spaceOf({ space: 'plant-a' }), 'plant-a');
  t.throws(() => spaceOf({ space: null }), new ProblemError('bad_header', 'The request names no space (X-Space)'));
  t.match(
    t.throws(() => spaceOf({ space: '' })),
    { code: 'bad_header', status: 400 },
  );
});

t.test('actorOf answers the authenticated caller, or 401 unauthenticated', async (t) => {
  const actor = { id: 'u-1', name: 'operator', roles: ['operator'] };
  t.equal(actorOf({ actor } as never), actor);
  t.match(
    t.throws(() => actorOf({ actor: null })),
    { code: 'unauthenticated', status: 401 },
  );
});

t.test('notFound names what the space does not hold', async (t) => {
  t.match(notFound('connection', 'c-9'), { code: 'not_found', status: 404, detail: 'No connection c-9 in this space' });
});
