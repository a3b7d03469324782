import { alarmDefinitionOperations } from './alarm_ops.ts';
import { animationOperations } from './animations.ts';
import { dashboardOperations } from './dashboard_ops.ts';
import { faceplateOperations } from './faceplate_ops.ts';
import { lookupOperations } from './lookup_ops.ts';
import { projectOperations } from './project_ops.ts';
import { scriptOperations } from './script_ops.ts';
import { scriptRuntimeOperations } from './script_runtime_ops.ts';

/** The config service's contract: schemas, events and the operations on projects, dashboards, faceplates, scripts. */
export * from './kinds.ts';
export * from './resource.ts';
export * from './schemas.ts';
export * from './events.ts';
export * from './project_ops.ts';
export * from './dashboard_ops.ts';
export * from './faceplate_ops.ts';
export * from './script_ops.ts';
export * from './script_runtime_ops.ts';
export * from './lookup_ops.ts';
export * from './alarm_ops.ts';
export * from './animations.ts';

/** Every operation of the config service, for the registry. */
export const configOperations = [
  ...projectOperations,
  ...dashboardOperations,
  ...faceplateOperations,
  ...scriptOperations,
  ...scriptRuntimeOperations,
  ...lookupOperations,
  ...alarmDefinitionOperations,
  ...animationOperations,
];
