// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * pollUntil (polling.ts): one step per interval until a step gives a value.
 */

import { pollUntil } from '../src/polling';

describe('pollUntil', () => {
  it('steps until a value other than undefined, then stops', async () => {
    let steps = 0;
    const value = await pollUntil(() => (++steps < 3 ? undefined : 'done'), {
      interval: 5
    });
    expect(value).toBe('done');
    expect(steps).toBe(3);
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(steps).toBe(3);
  });

  it('takes false and null as values', async () => {
    await expect(pollUntil(() => false, { interval: 5 })).resolves.toBe(false);
    await expect(
      pollUntil(async () => null, { interval: 5 })
    ).resolves.toBeNull();
  });

  it('runs one step at a time', async () => {
    let running = 0;
    let most = 0;
    let steps = 0;
    await pollUntil(
      async () => {
        most = Math.max(most, ++running);
        await new Promise(resolve => setTimeout(resolve, 20));
        running--;
        return ++steps < 3 ? undefined : true;
      },
      { interval: 1 }
    );
    expect(most).toBe(1);
  });

  it('waits one interval before the first step when asked', async () => {
    const started = Date.now();
    let first = 0;
    await pollUntil(
      () => {
        first ||= Date.now();
        return true;
      },
      { interval: 60, waitFirst: true }
    );
    expect(first - started).toBeGreaterThanOrEqual(50);
    const soon = Date.now();
    let at = 0;
    await pollUntil(
      () => {
        at = Date.now();
        return true;
      },
      { interval: 1000 }
    );
    expect(at - soon).toBeLessThan(500);
  });

  it('ends with the error of a step that throws', async () => {
    let steps = 0;
    const failing = pollUntil(
      () => {
        if (++steps === 2) {
          throw new Error('boom');
        }
        return undefined;
      },
      { interval: 5 }
    );
    await expect(failing).rejects.toThrow('boom');
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(steps).toBe(2);
  });
});
