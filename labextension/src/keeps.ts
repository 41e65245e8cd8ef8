// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The server's answer to `keep` (`keep-verdict`); `code` says why when it is
 * refused, e.g. `kill-switch`, `aborted`, or `timeout` when no verdict
 * arrived.
 */
export interface IKeepVerdict {
  ok: boolean;
  code?: string;
}

/**
 * The verdict of a Keep that got no answer.
 */
export const TIMED_OUT: IKeepVerdict = { ok: false, code: 'timeout' };

/**
 * Keeps waiting for their `keep-verdict`, by callId. Each wait ends with
 * the verdict, with {@link TIMED_OUT} after its deadline, or with
 * {@link TIMED_OUT} when the connection goes ({@link failAll}).
 */
export class KeepWaiters {
  /**
   * Wait for the verdict of one call.
   *
   * @param callId - The call whose review the person wants to keep.
   * @param timeoutMs - How long to wait.
   */
  wait(callId: string, timeoutMs: number): Promise<IKeepVerdict> {
    return new Promise(resolve => {
      const waiter: Private.IWaiter = { resolve, timer: 0 };
      waiter.timer = window.setTimeout(
        () => this._settle(callId, waiter, TIMED_OUT),
        timeoutMs
      );
      const waiters = this._waiters.get(callId) ?? [];
      waiters.push(waiter);
      this._waiters.set(callId, waiters);
    });
  }

  /**
   * Settle the waits of a `keep-verdict` message from the server.
   */
  settle(msg: Record<string, unknown>): void {
    const callId = typeof msg.callId === 'string' ? msg.callId : '';
    const verdict: IKeepVerdict =
      msg.ok === true
        ? { ok: true }
        : {
            ok: false,
            code: typeof msg.code === 'string' ? msg.code : undefined
          };
    for (const waiter of [...(this._waiters.get(callId) ?? [])]) {
      this._settle(callId, waiter, verdict);
    }
  }

  /**
   * Settle every wait as timed out: without a socket no verdict can arrive,
   * and a verdict for an earlier connection is never assumed.
   */
  failAll(): void {
    for (const [callId, waiters] of [...this._waiters.entries()]) {
      for (const waiter of waiters) {
        this._settle(callId, waiter, TIMED_OUT);
      }
    }
  }

  private _settle(
    callId: string,
    waiter: Private.IWaiter,
    verdict: IKeepVerdict
  ): void {
    window.clearTimeout(waiter.timer);
    const rest = (this._waiters.get(callId) ?? []).filter(w => w !== waiter);
    if (rest.length) {
      this._waiters.set(callId, rest);
    } else {
      this._waiters.delete(callId);
    }
    waiter.resolve(verdict);
  }

  private _waiters = new Map<string, Private.IWaiter[]>();
}

namespace Private {
  /**
   * One pending wait.
   */
  export interface IWaiter {
    resolve: (verdict: IKeepVerdict) => void;
    timer: number;
  }
}
