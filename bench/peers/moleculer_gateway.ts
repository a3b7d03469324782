/**
 * The Moleculer peer's API gateway node: `moleculer-web` mixed into a service, with REST aliases for the
 * echo, the list and the create, on NATS; the actions run in the service node (`moleculer_service.ts`).
 * As the moleculer-web documentation shows it; logging as the broker's default. `PORT` is where it
 * listens, `NAMESPACE` keeps it apart from other brokers on the same NATS server.
 */
import { ServiceBroker } from 'moleculer';
import ApiGateway from 'moleculer-web';

const broker = new ServiceBroker({
  namespace: process.env.NAMESPACE,
  nodeID: `gateway-${process.pid}`,
  transporter: { type: 'NATS', options: { url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' } },
});

broker.createService({
  name: 'api',
  mixins: [ApiGateway],
  settings: {
    port: Number(process.env.PORT ?? 3000),
    ip: '127.0.0.1',
    routes: [
      {
        path: '/api',
        aliases: {
          'GET echo': 'echo.echo',
          'GET projects': 'config.listProjects',
          'POST dashboard/:groupId/boards': 'config.createBoard',
        },
        mappingPolicy: 'restrict',
        bodyParsers: { json: true },
      },
    ],
  },
});

await broker.start();
process.stdout.write('started\n');
process.on('SIGTERM', () => void broker.stop().then(() => process.exit(0)));
