import { Type, type Static } from '@sinclair/typebox';
import { defineEvent } from '../event.ts';
import type { ServiceName } from '../operation.ts';

/** The entities the config service publishes events about, as they appear in event subjects. */
export type ConfigEntity =
  | 'project'
  | 'board_group'
  | 'board'
  | 'faceplate'
  | 'placeholder'
  | 'script'
  | 'alarm_group'
  | 'alarm'
  | 'animation';

/** What happened to an entity. */
export type ConfigVerb = 'created' | 'updated' | 'deleted';

/** Body of every config event: which entity, in which space, changed by whom (the user's name). */
export const ConfigEvent = Type.Object({
  space: Type.String(),
  id: Type.String(),
  actor: Type.String(),
  /** When the event was published (ISO 8601). */
  at: Type.String({ format: 'date-time' }),
});
export type ConfigEvent = Static<typeof ConfigEvent>;

/** Body of `config.script.ran`: a script's run ended. */
export const ScriptRanEvent = Type.Object({
  space: Type.String(),
  id: Type.String({ description: 'The script.' }),
  outcome: Type.String(),
  durationMs: Type.Number(),
  /** The replica that ran it. */
  by: Type.String(),
  /** Whether the run changed the script's state (replicas holding a copy read it again). */
  stateChanged: Type.Boolean(),
  at: Type.String({ format: 'date-time' }),
});
export type ScriptRanEvent = Static<typeof ScriptRanEvent>;

/** The body the registry's tests publish of every config event. */
const configExample: ConfigEvent = {
  space: 'default',
  id: '0b9f3c1e-5d2a-4c7e-9a41-2f6d8e0c7b13',
  actor: 'admin',
  at: '2026-04-22T09:30:00.000Z',
};

const verbs = ['created', 'updated', 'deleted'] as const;
const entityEvent = <N extends string>(name: N, followers: readonly ServiceName[] = []) =>
  defineEvent({
    name: `config.${name}`,
    publisher: 'config',
    followers,
    kinds: verbs,
    schema: ConfigEvent,
    example: configExample,
    summary: `A ${name.replace('_', ' ')} was created, changed or deleted (committed).`,
  });

/** Events the config service publishes after a change commits. A new script code is `script.updated`. */
export const configEvents = {
  project: entityEvent('project'),
  board_group: entityEvent('board_group'),
  board: entityEvent('board'),
  faceplate: entityEvent('faceplate'),
  placeholder: entityEvent('placeholder'),
  /** The protocol service takes up a space's alarm definitions again after these. */
  alarm_group: entityEvent('alarm_group', ['protocol']),
  alarm: entityEvent('alarm', ['protocol']),
  animation: entityEvent('animation'),
  script: defineEvent({
    name: 'config.script',
    publisher: 'config',
    followers: ['config'],
    kinds: [...verbs, 'scheduled', 'unscheduled'],
    schema: ConfigEvent,
    example: configExample,
    summary: 'A script was created, changed, deleted, scheduled or unscheduled; the config replicas holding scripts follow these.',
  }),
  scriptRan: defineEvent({
    name: 'config.script.ran',
    publisher: 'config',
    followers: ['config'],
    schema: ScriptRanEvent,
    example: {
      space: 'default',
      id: '0b9f3c1e-5d2a-4c7e-9a41-2f6d8e0c7b13',
      outcome: 'ok',
      durationMs: 3.25,
      by: 'config-1',
      stateChanged: true,
      at: '2026-04-22T09:30:00.000Z',
    },
    summary: "A script's run ended (on the live channel, `event: script`).",
  }),
};
