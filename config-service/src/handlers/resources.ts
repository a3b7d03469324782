import {
  alarmGroupResource,
  alarmResource,
  animationResource,
  boardGroupResource,
  boardResource,
  faceplateResource,
  placeholderResource,
  projectResource,
  scriptResource,
  type ConfigEntity,
  type ResourceOperations,
} from '@scada/contracts';
import type { Implementation } from '@scada/platform';
import type { EntityTable } from '../store/entity_table.ts';
import { alarmGroups, alarms, animations, boardGroups, boards, faceplates, placeholders, projects, scripts } from '../store/tables.ts';
import { alarmChecker, alarmDefinitionHandlers, alarmGroupChecker } from './alarm_definitions.ts';
import { animationChecker, animationHandlers } from './animations.ts';
import type { HandlerDeps } from './context.ts';
import { crudHandlers, type Resource } from './crud.ts';
import { updateScriptCodeHandler } from './script_code.ts';

/** What the service needs of a resource's definition: its operations and where its ids sit in the paths. */
type Definition = { entity: ConfigEntity; operations: ResourceOperations; id: { param: string }; parent?: { param: string } };

/** A resource's definition bound to its table (and its parent's, for resources under a parent in the path). */
function bind(definition: Definition, table: EntityTable, parentTable?: EntityTable): Resource {
  const { entity, operations, id, parent } = definition;
  if (parent && !parentTable) throw new Error(`the ${entity} resource hangs under ${parent.param}: bind it with its parent's table`);
  return {
    entity,
    table,
    ops: operations,
    idParam: id.param,
    parent: parent && parentTable ? { param: parent.param, table: parentTable } : undefined,
  };
}

/** The resources of the config service, each bound to its operations and its table. */
const resources = (deps: HandlerDeps): Resource[] => [
  bind(projectResource, projects),
  bind(boardGroupResource, boardGroups),
  bind(boardResource, boards, boardGroups),
  bind(faceplateResource, faceplates),
  bind(placeholderResource, placeholders, faceplates),
  bind(scriptResource, scripts),
  { ...bind(alarmGroupResource, alarmGroups), check: alarmGroupChecker(deps) },
  { ...bind(alarmResource, alarms), check: alarmChecker(deps) },
  { ...bind(animationResource, animations), check: animationChecker(deps) },
];

/** Every handler of the configuration resources. */
export function resourceHandlers(deps: HandlerDeps): Implementation[] {
  return [
    ...resources(deps).flatMap((r) => crudHandlers(deps, r)),
    updateScriptCodeHandler(deps),
    ...alarmDefinitionHandlers(deps),
    ...animationHandlers(deps),
  ];
}
