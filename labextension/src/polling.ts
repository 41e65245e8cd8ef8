// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { Poll } from '@lumino/polling';

/**
 * Call `step` every `interval` milliseconds until it returns a value other
 * than `undefined`, and resolve with that value. A step runs only after the
 * previous one settled; polling goes on in a hidden tab too. A step that
 * throws ends the polling with its error.
 *
 * @param step - One attempt: a result, or `undefined` to try again.
 * @param options.interval - The time between two steps, in milliseconds.
 * @param options.waitFirst - Wait one interval before the first step too;
 *   without it the first step runs at once (on the next task).
 */
export function pollUntil<T>(
  step: () => T | undefined | Promise<T | undefined>,
  options: { interval: number; waitFirst?: boolean }
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const poll = new Poll({
      auto: false,
      factory: async () => {
        let value: T | undefined;
        try {
          value = await step();
        } catch (error) {
          poll.dispose();
          reject(error);
          return;
        }
        if (value !== undefined) {
          poll.dispose();
          resolve(value);
        }
      },
      frequency: { interval: options.interval, backoff: false },
      standby: 'never'
    });
    const first = options.waitFirst ? options.interval : Poll.IMMEDIATE;
    void poll.schedule({ interval: first, phase: 'started' });
  });
}

/**
 * A promise's value, or a rejection after `ms` milliseconds.
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = window.setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      value => {
        window.clearTimeout(timer);
        resolve(value);
      },
      reason => {
        window.clearTimeout(timer);
        reject(reason);
      }
    );
  });
}
