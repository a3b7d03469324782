import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema } from '../operation.ts';
import { operationsOfAll } from './resource.ts';
import { alarmGroupResource, alarmResource } from './schemas.ts';

/** The alarm group operations, from the alarm group's definition (`schemas.ts`). */
export const {
  list: getAlarmGroups,
  create: createAlarmGroup,
  get: getAlarmGroup,
  update: updateAlarmGroup,
  remove: deleteAlarmGroup,
} = alarmGroupResource.operations;

/** The alarm definition operations, from the alarm's definition (`schemas.ts`). */
export const {
  list: getAlarmDefinitions,
  create: createAlarmDefinition,
  get: getAlarmDefinition,
  update: updateAlarmDefinition,
  remove: deleteAlarmDefinition,
} = alarmResource.operations;

/** An alarm definition as the evaluator takes it: the definition with its group's project. */
export const EvaluatedAlarm = Type.Composite([
  alarmResource.response,
  Type.Object({ projectId: Type.String({ description: "The alarm group's project." }) }),
]);
export type EvaluatedAlarm = Static<typeof EvaluatedAlarm>;

/**
 * Internal (the protocol service's evaluator): every alarm definition of the caller's space, each with its
 * group's project, in one answer.
 */
export const alarmDefinitionsOfSpace = defineOperation({
  operationId: 'alarmDefinitionsOfSpace',
  service: 'config',
  summary: 'Every alarm definition of the space, for the evaluator',
  tags: ['Alarms'],
  description: 'Between services only. An extension of the reference interface.',
  request: requestSchema({}),
  response: Type.Array(EvaluatedAlarm),
});

/** The alarm definition operations. */
export const alarmDefinitionOperations = [...operationsOfAll([alarmGroupResource, alarmResource]), alarmDefinitionsOfSpace];
