// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { PluginRegistry } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';

import { BridgeHandle, ReviewsHandle } from '../src/handles';
import { ICopilotBridge, ICopilotReviews } from '../src/tokens';

class FakeBridge implements BridgeHandle.IBridge {
  pageId = 'page-1';
  isOpen = false;
  toolsEnabled = false;
  opened = new Signal<this, void>(this);
  toolsEnabledChanged = new Signal<this, boolean>(this);
}

class FakeReviews implements ReviewsHandle.IReviews {
  list: ICopilotReviews.IEntry[] = [];
  changed = new Signal<this, void>(this);
  entries(): readonly ICopilotReviews.IEntry[] {
    return this.list;
  }
  reveal(callId: string): boolean {
    return this.list.some(e => e.callId === callId && e.state === 'open');
  }
}

/**
 * Our two plugins as index.ts declares them, over the handles, and another
 * extension's plugin that requires both tokens.
 */
function registry(bridge: BridgeHandle, reviews: ReviewsHandle) {
  const plugins = new PluginRegistry();
  plugins.registerPlugin({
    id: 'jupyterlab-agent-review:plugin',
    provides: ICopilotBridge,
    activate: () => bridge
  });
  plugins.registerPlugin({
    id: 'jupyterlab-agent-review:reviews',
    provides: ICopilotReviews,
    requires: [ICopilotBridge],
    activate: () => reviews
  });
  return plugins;
}

describe('the ICopilotBridge and ICopilotReviews tokens', () => {
  it('are named after the lab extension', () => {
    expect(ICopilotBridge.name).toBe('jupyterlab-agent-review:ICopilotBridge');
    expect(ICopilotReviews.name).toBe(
      'jupyterlab-agent-review:ICopilotReviews'
    );
  });

  it('give a second plugin the bridge, which attaches later', async () => {
    const handle = new BridgeHandle();
    const plugins = registry(handle, new ReviewsHandle());
    let seen: ICopilotBridge | null = null;
    let changes = 0;
    plugins.registerPlugin({
      id: 'another-extension:plugin',
      requires: [ICopilotBridge],
      activate: (_app: unknown, bridge: ICopilotBridge) => {
        seen = bridge;
        bridge.changed.connect(() => (changes += 1));
      }
    });
    await plugins.activatePlugin('another-extension:plugin');
    expect(seen).toBe(handle);
    expect(handle.pageId).toBeNull();
    expect(handle.isOpen).toBe(false);

    const bridge = new FakeBridge();
    handle.attach(bridge);
    handle.absent();
    await expect(handle.ready).resolves.toBe(true);
    expect(handle.pageId).toBe('page-1');
    bridge.isOpen = true;
    bridge.opened.emit();
    bridge.toolsEnabled = true;
    bridge.toolsEnabledChanged.emit(true);
    expect(handle.isOpen).toBe(true);
    expect(handle.toolsEnabled).toBe(true);
    expect(changes).toBe(2);
  });

  it('settle ready false when jupyter-copilot does not run on the page', async () => {
    const handle = new BridgeHandle();
    handle.absent();
    await expect(handle.ready).resolves.toBe(false);
    expect(handle.pageId).toBeNull();
  });

  it('give a second plugin the reviews, as copies it cannot change', async () => {
    const handle = new ReviewsHandle();
    const plugins = registry(new BridgeHandle(), handle);
    const reviews = await plugins.resolveRequiredService(ICopilotReviews);
    expect(reviews.entries()).toEqual([]);
    expect(reviews.reveal('call-1')).toBe(false);
    let changes = 0;
    reviews.changed.connect(() => (changes += 1));

    const manager = new FakeReviews();
    handle.attach(manager);
    manager.list = [
      {
        callId: 'call-1',
        kind: 'edit',
        path: 'a.ipynb',
        cellId: 'c1',
        state: 'open',
        openedAt: 1
      }
    ];
    manager.changed.emit();
    expect(changes).toBe(2);
    const [entry] = reviews.entries();
    expect(entry).toEqual(manager.list[0]);
    expect(entry).not.toBe(manager.list[0]);
    expect(reviews.reveal('call-1')).toBe(true);
    expect('keep' in reviews || 'undo' in reviews).toBe(false);
  });
});
