import { echo } from '@scada/contracts';
import { implement } from '@scada/platform';

/** The diagnostic echo: answers the text with what the service knows of the request. */
export function echoHandler(instance: string) {
  return implement(echo, async (request, ctx) => ({
    text: request.query.text ?? '',
    space: ctx.space,
    requestId: ctx.requestId,
    service: 'config',
    instance,
  }));
}
