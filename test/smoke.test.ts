import t from 'tap';
import { MemoryBus } from '@scada/platform';
t.test('memory bus answers a request', async (t) => {
  const bus = new MemoryBus();
  const svc = await bus.addService({ name: 'x', version: '1.0.0' }, [
    { name: 'a', subject: 'x.a', handler: async (m) => ({ data: m.data }) },
  ]);
  const r = await bus.request('x.a', new TextEncoder().encode('hi'));
  t.equal(new TextDecoder().decode(r.data), 'hi');
  await svc.stop();
});
