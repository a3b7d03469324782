/**
 * Versions of spaces: what lets a gateway answer a read from its cache without ever answering one that a
 * write has made wrong. A service that served a change in a space bumps the space's version before it
 * answers the change (`serve` does it for every operation that is not a read); a gateway follows the
 * versions and keeps a cached answer only while the stamp it was fetched under is still the space's stamp.
 *
 * Two real implementations behind one interface, like the bus: an in-process one for one machine (every
 * gateway and service of the process shares it, so a bump is seen at once) and one on a JetStream
 * key-value bucket (`nats_space_versions.ts`), whose acknowledged put the service waits for and whose
 * watchers hear within milliseconds.
 */

/** The stamp of a space as one process knows it: changes whenever a change of the space is heard. */
export type SpaceStamp = number;

/** Versions of spaces, as the bus of a process carries them (`Bus.spaceVersions`). */
export interface SpaceVersions {
  /**
   * Records that something in the space changed. Resolves once every process following the versions
   * can hear it; rejects when the change could not be recorded (the caller answers its write anyway).
   */
  bump(space: string): Promise<void>;
  /** Starts following the versions; resolves once every change recorded from now on will be heard. */
  follow(): Promise<void>;
  /**
   * The space's stamp: a number this process never gave before, once a change of the space was heard
   * (or the process may have missed one, as when the bus was disconnected). `undefined` while this
   * process cannot hear changes: not following, disconnected, or closed. Nothing may be answered from a
   * cache then.
   */
  stampOf(space: string): SpaceStamp | undefined;
  /** Stops following. */
  close(): Promise<void>;
}

/**
 * The stamps of spaces a process has heard changes of. Every heard change, and every moment changes may
 * have been missed, takes the next number of one counter: a stamp is never given twice.
 */
export class StampBook {
  #next = 0;
  /** Stamps of the spaces heard changing since `#floor` was set. */
  readonly #stamps = new Map<string, SpaceStamp>();
  /** The stamp of every space not heard changing since changes may last have been missed. */
  #floor = 0;

  /** The space changed. */
  changed(space: string): void {
    this.#stamps.set(space, ++this.#next);
  }

  /** Changes may have been missed (a reconnect, a restart of the watch): every space gets a new stamp. */
  forgetAll(): void {
    this.#stamps.clear();
    this.#floor = ++this.#next;
  }

  stampOf(space: string): SpaceStamp {
    return this.#stamps.get(space) ?? this.#floor;
  }
}

/**
 * The in-process versions: one book for every gateway and service of the process, bumped synchronously,
 * so a write's bump is seen by every reader before the write is answered.
 */
export class MemorySpaceVersions implements SpaceVersions {
  readonly #book = new StampBook();
  readonly #isOpen: () => boolean;

  /** `isOpen` says whether the bus the versions travel with still carries messages. */
  constructor(isOpen: () => boolean) {
    this.#isOpen = isOpen;
  }

  async bump(space: string): Promise<void> {
    this.#book.changed(space);
  }

  async follow(): Promise<void> {}

  stampOf(space: string): SpaceStamp | undefined {
    return this.#isOpen() ? this.#book.stampOf(space) : undefined;
  }

  async close(): Promise<void> {}
}
