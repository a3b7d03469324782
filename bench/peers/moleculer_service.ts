/**
 * The Moleculer peer's service node: an `echo` service and a `boards`/`projects` service reading and
 * writing the platform's own PostgreSQL rows (the same table code, so the same SQL), on NATS. As the
 * Moleculer documentation shows it: a broker with the NATS transporter, services with actions and their
 * `params` checked by the built-in validator; logging as the broker's default (info, to the console).
 * `NAMESPACE` keeps it apart from other brokers on the same NATS server.
 */
import { randomUUID } from 'node:crypto';
import { ServiceBroker } from 'moleculer';
import pg from 'pg';
import { boards, projects } from '@scada/config/tables';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const space = process.env.SPACE ?? 'default';

const broker = new ServiceBroker({
  namespace: process.env.NAMESPACE,
  nodeID: `service-${process.pid}`,
  transporter: { type: 'NATS', options: { url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' } },
});

broker.createService({
  name: 'echo',
  actions: {
    echo: {
      params: { text: 'string' },
      handler(ctx) {
        return { text: ctx.params.text };
      },
    },
  },
});

broker.createService({
  name: 'config',
  actions: {
    listProjects() {
      return projects.list(pool, space);
    },
    createBoard: {
      params: {
        groupId: 'uuid',
        name: 'string|min:1|max:200',
        type: 'string',
        header: 'boolean',
        x: 'number|integer',
        y: 'number|integer',
        width: 'number|integer|positive',
        height: 'number|integer|positive',
      },
      handler(ctx) {
        const { groupId, ...fields } = ctx.params;
        return boards.insert(pool, space, randomUUID(), fields, { actor: 'bench', at: new Date() }, groupId);
      },
    },
  },
});

await broker.start();
process.stdout.write('started\n');
process.on(
  'SIGTERM',
  () =>
    void broker
      .stop()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
