/**
 * The device requests of one connection under way on the replica holding it. Each operation of the API
 * on the device (a read, a write, a control, a browse, a chunk of a file, a page of a log) holds a place
 * from its start to its answer, whether its MMS requests are out on the association or waiting for a turn
 * behind the ones that are. Past the bound a request is refused at once with 503 `overloaded` and
 * `Retry-After`, never queued: a flood of requests to one device cannot grow a queue that only the device's
 * own pace would drain.
 */
import { deviceRequestsPerConnectionSetting, ProblemError } from '@scada/contracts';

/** Device requests one connection may have under way unless told otherwise (DEVICE_REQUESTS_PER_CONNECTION). */
export const defaultDeviceRequestsPerConnection: number = deviceRequestsPerConnectionSetting.fallback;

/** Seconds a refused caller is told to wait: a device answers a few requests within it. */
const retryAfterSeconds = 1;

/** The places of one connection's device requests. */
export class DeviceRequests {
  readonly #max: number;
  #underWay = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** Requests under way now. */
  get underWay(): number {
    return this.#underWay;
  }

  /** Runs `work` in a place of its own; with every place taken, refuses at once with 503 `overloaded`. */
  async run<T>(connectionId: string, work: () => Promise<T>): Promise<T> {
    if (this.#underWay >= this.#max)
      throw new ProblemError(
        'overloaded',
        `Connection ${connectionId} has ${this.#underWay} device requests under way, as many as it takes (${deviceRequestsPerConnectionSetting.name})`,
        { retryAfter: retryAfterSeconds },
      );
    this.#underWay++;
    try {
      return await work();
    } finally {
      this.#underWay--;
    }
  }
}
