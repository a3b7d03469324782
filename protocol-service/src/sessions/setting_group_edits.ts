/**
 * Who changes a connection's setting groups, as the platform sees it. The device knows only its one
 * association: every user's request reaches it through the replica holding the connection, so the device
 * cannot tell two users apart. The session does, per logical device's block:
 *
 * - one change at a time: a second while one is pending is 409 `control_in_progress` at once, as two
 *   operations on one control object are;
 * - the edit belongs to the user who selected the group for edit: another user's change of the edit
 *   (values, confirmation, cancel, another selection) is 409 `control_in_progress` while the device still
 *   has a group selected on the same association. A new association (a reconnect, a takeover) ends the
 *   selection on the device, and a device whose reservation ran out answers EditSG 0: either frees the edit.
 */
import { ProblemError } from '@scada/contracts';
import type { LiveDevice, SettingGroupBlock } from './live_device.ts';

/** The user behind a request. */
export type Editor = { userId: string | null; username: string | null };

/** Who holds an edit, and on which association (a request's device is a view of it: compared by `association`). */
type Holder = { association: object; editor: Editor };

export class SettingGroupEdits {
  readonly #pending = new Set<string>();
  readonly #holders = new Map<string, Holder>();

  /** Runs one change of a logical device's block; another on the same block meanwhile is refused at once. */
  async exclusive<T>(ld: string, work: () => Promise<T>): Promise<T> {
    if (this.#pending.has(ld))
      throw new ProblemError('control_in_progress', `Another change of the setting groups of ${ld} is in progress`);
    this.#pending.add(ld);
    try {
      return await work();
    } finally {
      this.#pending.delete(ld);
    }
  }

  /** The user editing `block` through this association, while the device still has a group selected for edit. */
  editorOf(device: LiveDevice, block: SettingGroupBlock): Editor | null {
    const holder = this.#holders.get(block.ld);
    if (!holder) return null;
    if (holder.association !== device.association || block.editGroup === 0) {
      this.#holders.delete(block.ld);
      return null;
    }
    return holder.editor;
  }

  /** Refuses a change of the edit of `block` by anyone but the user who selected its group for edit. */
  checkEditor(device: LiveDevice, block: SettingGroupBlock, who: Editor): void {
    const editor = this.editorOf(device, block);
    if (editor && editor.userId !== who.userId)
      throw new ProblemError(
        'control_in_progress',
        `Setting group ${block.editGroup} of ${block.ld} is being edited by ${editor.username ?? editor.userId ?? 'another user'}`,
      );
  }

  /** The group of `ld` was selected for edit by `who` on this association. */
  hold(device: LiveDevice, ld: string, who: Editor): void {
    this.#holders.set(ld, { association: device.association, editor: who });
  }

  /** The selection for edit of `ld` ended. */
  release(ld: string): void {
    this.#holders.delete(ld);
  }
}
