/**
 * The ISA-18.2 (IEC 62682) lifecycle of one alarm, as a table: what a change of its condition, and each
 * operator's action, makes of a state. The condition (`active`) is tracked in every state, so that an
 * alarm coming off the shelf or back into service comes back as what it is then: `unacknowledged` while
 * the condition holds, `normal` otherwise.
 *
 * | state              | condition comes  | condition goes      | ack    | shelve  | unshelve / expiry | out of service | in service |
 * |--------------------|------------------|---------------------|--------|---------|-------------------|----------------|------------|
 * | normal             | unacknowledged   | –                   | –      | shelved | –                 | out_of_service | –          |
 * | unacknowledged     | –                | rtn_unacknowledged  | acknowledged | shelved | –           | out_of_service | –          |
 * | acknowledged       | –                | normal              | –      | shelved | –                 | out_of_service | –          |
 * | rtn_unacknowledged | unacknowledged   | –                   | normal | shelved | –                 | out_of_service | –          |
 * | shelved            | (tracked)        | (tracked)           | –      | –       | unack. / normal   | out_of_service | –          |
 * | out_of_service     | (tracked)        | (tracked)           | –      | –       | –                 | –              | unack. / normal |
 *
 * A dash is no transition: for an operator's action, 409 `conflict`.
 */
import type { AlarmStateName } from '@scada/contracts';

/** What may happen to an alarm. */
export type AlarmAction = 'ack' | 'shelve' | 'unshelve' | 'out_of_service' | 'in_service';

/** The state after the condition became `active` (true: it holds), or null when the state stays. */
export function onCondition(state: AlarmStateName, active: boolean): AlarmStateName | null {
  if (active) return state === 'normal' || state === 'rtn_unacknowledged' ? 'unacknowledged' : null;
  if (state === 'unacknowledged') return 'rtn_unacknowledged';
  if (state === 'acknowledged') return 'normal';
  return null;
}

/** The state after an action, with the condition as it is (`active`); null when the state does not allow it. */
export function onAction(state: AlarmStateName, action: AlarmAction, active: boolean): AlarmStateName | null {
  const back: AlarmStateName = active ? 'unacknowledged' : 'normal';
  switch (action) {
    case 'ack':
      return state === 'unacknowledged' ? 'acknowledged' : state === 'rtn_unacknowledged' ? 'normal' : null;
    case 'shelve':
      return state === 'shelved' || state === 'out_of_service' ? null : 'shelved';
    case 'unshelve':
      return state === 'shelved' ? back : null;
    case 'out_of_service':
      return state === 'out_of_service' ? null : 'out_of_service';
    case 'in_service':
      return state === 'out_of_service' ? back : null;
  }
}

/** Whether the alarm raises, clears and waits for acknowledgement (not shelved or out of service). */
export function inService(state: AlarmStateName): boolean {
  return state !== 'shelved' && state !== 'out_of_service';
}
