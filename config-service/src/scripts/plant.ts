/**
 * What a script's `ins.read`, `ins.values`, `ins.write` and `ins.operate` do: calls to the protocol service
 * over the bus, as the script itself. The actor is `script:<id>`, an editor of the script's own space and
 * of no other, so a connection of another space is 404 as for any user of the space, and every write and
 * control lands in the control log under that actor. Each call is a request of its own (a fresh request
 * id) whose deadline is what is left of the run's.
 */
import { randomUUID } from 'node:crypto';
import {
  getConnectionValues,
  operateConnectionControl,
  ProblemError,
  readConnectionValues,
  writeConnectionValue,
  type Actor,
} from '@scada/contracts';
import { call, type Bus, type CallContext } from '@scada/platform';
import type { HostApi, HostCall } from './limits.ts';

/** The script a run belongs to. */
export type ScriptIdentity = { space: string; id: string; name: string };

/** The actor a script acts as. */
export function scriptActor(script: ScriptIdentity): Actor {
  return { id: `script:${script.id}`, name: script.name, roles: ['editor'], spaces: [script.space] };
}

/** The control models of IEC 61850-7-3 ctlModel, by value; the selecting ones are the `sbo` ones. */
const controlModels = [
  'status-only',
  'direct-with-normal-security',
  'sbo-with-normal-security',
  'direct-with-enhanced-security',
  'sbo-with-enhanced-security',
];

/** How long past the run's deadline a host call may still be answered (the run has ended by then). */
const callGraceMs = 250;

/**
 * Serves a run's host calls through the protocol service; `deadlineAt` tells when the run ends at the latest
 * (known once a worker has taken it: the run's deadline counts from then).
 */
export function plantApi(bus: Bus, script: ScriptIdentity, deadlineAt: () => number): HostApi {
  const actor = scriptActor(script);
  const ctx = (): CallContext => ({
    requestId: randomUUID(),
    space: script.space,
    actor,
    // A little past the run's own deadline: the run ends `timeout` there, not on a call that gave up first.
    timeoutMs: Math.max(1, deadlineAt() - Date.now()) + callGraceMs,
  });
  const read = async (connectionId: string, reference: string) => {
    const [first] = await call(
      bus,
      readConnectionValues,
      { params: { connectionId }, query: {}, body: { references: [reference] } },
      ctx(),
    );
    if (!first || first.error !== undefined || !('value' in first))
      throw new ProblemError('device_refused', `${reference} could not be read: ${first?.error ?? 'no answer'}`, {
        extensions: { deviceError: { service: 'read', error: first?.error ?? 'no answer' } },
      });
    return { value: first.value, quality: first.quality ?? null, timestamp: first.timestamp ?? null };
  };
  // Nothing is sent for a run that has ended (its calls still waiting here, or an operate past its select).
  const stillRunning = (signal: AbortSignal) => {
    if (signal.aborted) throw new Error('the run has ended');
  };
  return async (c: HostCall, signal: AbortSignal) => {
    stillRunning(signal);
    switch (c.kind) {
      case 'read':
        return read(c.connectionId, c.reference);
      case 'values':
        return call(bus, getConnectionValues, { params: { connectionId: c.connectionId }, query: {} }, ctx());
      case 'write':
        await call(
          bus,
          writeConnectionValue,
          { params: { connectionId: c.connectionId }, query: {}, body: { reference: c.reference, value: c.value } },
          ctx(),
        );
        return null;
      case 'operate': {
        const { select, ...flags } = c.options;
        if (select !== undefined) await checkSelect(read, c.connectionId, c.reference, select);
        stillRunning(signal);
        await call(
          bus,
          operateConnectionControl,
          { params: { connectionId: c.connectionId }, query: {}, body: { reference: c.reference, value: c.value, ...flags } },
          ctx(),
        );
        return null;
      }
    }
  };
}

/**
 * `select: true` asks for a select before the operate, `false` for a direct operate. The device's control
 * model decides which happens (the protocol service follows it), so a script that asked for the other is
 * refused before anything is sent, with the model the device has.
 */
async function checkSelect(
  read: (connectionId: string, reference: string) => Promise<{ value: unknown }>,
  connectionId: string,
  reference: string,
  select: boolean,
): Promise<void> {
  const { value } = await read(connectionId, `${reference.replace(/\[[A-Z]{2}\]$/, '')}.ctlModel[CF]`);
  const model = typeof value === 'number' ? controlModels[value] : String(value);
  if (model === undefined) throw new ProblemError('bad_request', `${reference} has an unknown control model (${String(value)})`);
  const selects = model.startsWith('sbo');
  if (selects !== select)
    throw new ProblemError(
      'bad_request',
      `${reference} is ${model}: ${selects ? 'it is selected before it is operated' : 'it takes no select'}; nothing was sent`,
    );
}
