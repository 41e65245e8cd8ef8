// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * An agent the server lists as not installed is never a new conversation's
 * agent (chat/model.ts, docs/conversations.md "GET agents").
 */

import type { IAgentsInfo } from '../src/api';
import { initialSettings } from '../src/chat/model';
import { Preferences } from '../src/preferences';

const NOT_INSTALLED =
  'Not installed: npm install -g @google/gemini-cli, then restart JupyterLab.';

function catalog(defaultAgent: string | null): IAgentsInfo {
  return {
    agents: [
      {
        id: 'gemini',
        label: 'Gemini CLI',
        description: NOT_INSTALLED,
        unavailable: NOT_INSTALLED
      },
      { id: 'demo', label: 'Demo', description: '', unavailable: null }
    ],
    defaultAgent,
    contextRefs: [],
    modes: [],
    defaults: { contextRefs: [], mode: 'plan' },
    toolsEnabled: true
  };
}

describe('initialSettings', () => {
  it('skips an agent that is not installed, even when preferred', () => {
    const preferred = { ...Preferences.DEFAULTS, defaultAgent: 'gemini' };
    expect(initialSettings(catalog('demo'), preferred).agentId).toBe('demo');
  });

  it('falls back to the first agent that can start', () => {
    expect(initialSettings(catalog(null)).agentId).toBe('demo');
  });

  it('keeps a preferred agent that can start', () => {
    const preferred = { ...Preferences.DEFAULTS, defaultAgent: 'demo' };
    expect(initialSettings(catalog(null), preferred).agentId).toBe('demo');
  });
});
