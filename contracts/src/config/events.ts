import { Type, type Static } from '@sinclair/typebox';

/** The entities the config service publishes events about, as they appear in event subjects. */
export type ConfigEntity = 'project' | 'board_group' | 'board' | 'faceplate' | 'placeholder' | 'script' | 'alarm_group' | 'alarm';

/** What happened to an entity. */
export type ConfigVerb = 'created' | 'updated' | 'deleted';

/**
 * Events the config service publishes after a change commits: `events.config.<entity>.<verb>`. A new
 * script code is `script.updated`.
 */
export const configEvents = {
  /** The subject of one kind of event. */
  subject: (entity: ConfigEntity, verb: ConfigVerb) => `events.config.${entity}.${verb}`,
  /** Every event of the config service. */
  any: 'events.config.>',
  /** A script ran (`ScriptRanEvent`). */
  scriptRan: 'events.config.script.ran',
  /** A script was scheduled, or unscheduled (`ConfigEvent`); the replicas holding scripts follow these. */
  scriptScheduled: 'events.config.script.scheduled',
  scriptUnscheduled: 'events.config.script.unscheduled',
  /** Every event about alarm groups and alarms: the protocol service takes up the definitions again. */
  alarmGroupAny: 'events.config.alarm_group.*',
  alarmAny: 'events.config.alarm.*',
  /** Every event about scripts. */
  scriptAny: 'events.config.script.>',
} as const;

/** Body of every config event: which entity, in which space, changed by whom (the user's name). */
export const ConfigEvent = Type.Object({
  space: Type.String(),
  id: Type.String(),
  actor: Type.String(),
  /** When the event was published (ISO 8601). */
  at: Type.String({ format: 'date-time' }),
});
export type ConfigEvent = Static<typeof ConfigEvent>;

/** Body of `events.config.script.ran`: a script's run ended (on the live channel, `event: script`). */
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
