// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The chat model's rules (chat/model.ts) over a scripted API client.
 */

import type {
  CopilotApi,
  IAgentsInfo,
  IConversation,
  Outcome
} from '../src/api';
import { ClientCodes } from '../src/api';
import { ChatModel, initialSettings, NO_SETTINGS } from '../src/chat/model';
import { Preferences } from '../src/preferences';
import { english } from './translation';
import type { ContextModel } from '../src/contextmodel';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { Signal } from '@lumino/signaling';

const AGENTS: IAgentsInfo = {
  agents: [
    { id: 'a', label: 'A', description: '' },
    { id: 'b', label: 'B', description: '' }
  ],
  defaultAgent: 'b',
  contextRefs: [],
  modes: [],
  defaults: { contextRefs: ['active_notebook'], mode: 'plan' },
  toolsEnabled: true
};

function conversation(
  id: string,
  extra: Partial<IConversation> = {}
): IConversation {
  return {
    id,
    agentId: 'a',
    chatOnly: true,
    contextRefs: ['files'],
    mode: 'autopilot',
    agentLabel: 'A',
    toolsAttached: true,
    state: 'idle',
    archived: false,
    createdAt: '',
    title: 'Earlier',
    ...extra
  };
}

const ok = <T>(result: T): Outcome<T> => ({ result });
const refused = (code: string): Outcome<never> => ({
  error: { code, message: '' }
});

/**
 * A model over an API whose calls answer as given; the calls are recorded.
 */
function model(
  answers: Partial<
    Record<keyof CopilotApi, (...args: any[]) => Outcome<unknown>>
  >,
  preferences?: Preferences
) {
  const calls: string[] = [];
  const api = new Proxy({} as CopilotApi, {
    get:
      (_, name: string) =>
      async (...args: unknown[]) => {
        calls.push(name);
        const answer = (answers as any)[name];
        return answer ? answer(...args) : refused(ClientCodes.UNREACHABLE);
      }
  });
  const context = {
    attachment: null,
    detach: () => undefined,
    references: [],
    removeReferences: () => undefined
  } as unknown as ContextModel;
  const chat = new ChatModel({
    pageId: 'p',
    context,
    cellLabel: () => 'Cell',
    api,
    trans: english,
    preferences
  });
  return { chat, calls };
}

describe('the chat settings', () => {
  it('start from the server defaults, not Chat-only', () => {
    expect(initialSettings(AGENTS)).toEqual({
      agentId: 'b',
      chatOnly: false,
      contextRefs: ['active_notebook'],
      mode: 'plan'
    });
    const bare = {
      ...AGENTS,
      defaultAgent: null,
      defaults: undefined
    } as unknown as IAgentsInfo;
    expect(initialSettings(bare)).toEqual({
      agentId: 'a',
      chatOnly: false,
      contextRefs: [],
      mode: 'interactive'
    });
    // A policy that allows no mode: none is chosen (the server refuses Send).
    const none = {
      ...AGENTS,
      defaults: { contextRefs: [], mode: null }
    } as IAgentsInfo;
    expect(initialSettings(none).mode).toBe('');
    expect(NO_SETTINGS).toEqual({
      agentId: '',
      chatOnly: false,
      contextRefs: [],
      mode: ''
    });
  });
});

describe('ChatModel.load', () => {
  it('picks up the latest conversation with its turns when it is not archived', async () => {
    const { chat, calls } = model({
      agents: () => ok(AGENTS),
      conversations: () => ok([conversation('c1'), conversation('c0')]),
      conversation: (id: string) =>
        ok({ conversation: conversation(id), turns: [{ turnId: 't' }] })
    });
    await chat.load();
    expect(calls).toEqual(['agents', 'conversations', 'conversation']);
    expect(chat.conversation?.id).toBe('c1');
    expect(chat.settings).toEqual({
      agentId: 'a',
      chatOnly: true,
      contextRefs: ['files'],
      mode: 'autopilot'
    });
    expect(chat.turns.map(t => t.turnId)).toEqual(['t']);
  });

  it('starts empty with the defaults when the latest is archived or nothing answers', async () => {
    const archived = model({
      agents: () => ok(AGENTS),
      conversations: () => ok([conversation('c1', { archived: true })])
    });
    await archived.chat.load();
    expect(archived.calls).toEqual(['agents', 'conversations']);
    expect(archived.chat.conversation).toBeNull();
    expect(archived.chat.settings).toEqual(initialSettings(AGENTS));

    const silent = model({ agents: () => ok(AGENTS) });
    await silent.chat.load();
    expect(silent.chat.conversation).toBeNull();
    expect(silent.chat.notice).toBe('');
  });

  it('says why the agents did not load, and tries again on the next call', async () => {
    let answer: Outcome<IAgentsInfo> = refused(ClientCodes.UNREACHABLE);
    const { chat, calls } = model({
      agents: () => answer,
      conversations: () => ok([])
    });
    await chat.load();
    expect(chat.catalog).toBeNull();
    expect(chat.notice).toBe(
      'The Copilot server cannot be reached. Try again.'
    );
    answer = ok(AGENTS);
    await chat.load();
    expect(chat.catalog).toBe(AGENTS);
    expect(chat.notice).toBe('');
    expect(calls.filter(c => c === 'agents')).toHaveLength(2);
  });
});

describe('ChatModel.newConversation', () => {
  async function withTurn(archive: () => Outcome<unknown>) {
    const m = model({
      agents: () => ok(AGENTS),
      conversations: () => ok([conversation('c1')]),
      conversation: () =>
        ok({ conversation: conversation('c1'), turns: [{ turnId: 't' }] }),
      archiveConversation: archive
    });
    await m.chat.load();
    return m;
  }

  it('keeps the conversation only when the server cannot be reached', async () => {
    const unreachable = await withTurn(() => refused(ClientCodes.UNREACHABLE));
    expect(await unreachable.chat.newConversation()).toBe(false);
    expect(unreachable.chat.conversation?.id).toBe('c1');
    expect(unreachable.chat.notice).toBe(
      'The Copilot server cannot be reached. Try again.'
    );

    const gone = await withTurn(() => refused('unknown-conversation'));
    expect(await gone.chat.newConversation()).toBe(true);
    expect(gone.chat.conversation).toBeNull();
    expect(gone.chat.turns).toEqual([]);

    const archived = await withTurn(() =>
      ok(conversation('c1', { archived: true }))
    );
    expect(await archived.chat.newConversation()).toBe(true);
    expect(archived.chat.conversation).toBeNull();
    expect(archived.calls).toContain('archiveConversation');
  });

  it('starts with Chat only off, whatever the last conversation was', async () => {
    const m = await withTurn(() => ok(conversation('c1', { archived: true })));
    expect(m.chat.settings.chatOnly).toBe(true);
    expect(await m.chat.newConversation()).toBe(true);
    expect(m.chat.settings.chatOnly).toBe(false);
  });
});

describe('ChatModel.update', () => {
  it('keeps the settings it had when the server refuses the change', async () => {
    const { chat } = model({
      agents: () => ok(AGENTS),
      conversations: () => ok([conversation('c1')]),
      conversation: () =>
        ok({ conversation: conversation('c1'), turns: [{ turnId: 't' }] }),
      updateConversation: () => refused('conversation-busy')
    });
    await chat.load();
    const before = chat.settings;
    await chat.update({ mode: 'plan', agentId: 'b' });
    expect(chat.settings).toEqual(before);
    expect(chat.notice).toBe(
      'A reply is still running. Wait for it, or press Stop.'
    );
  });
});

/**
 * Settings as the registry hands them to the plugin: values that change,
 * with the signal that says so.
 */
class FakeSettings {
  constructor(public composite: Record<string, unknown>) {}
  readonly changed = new Signal<any, any>(this);
  set(values: Record<string, unknown>): void {
    this.composite = { ...this.composite, ...values };
    this.changed.emit(undefined);
  }
}

function preferences(values: Record<string, unknown>) {
  const settings = new FakeSettings(values);
  const prefs = new Preferences();
  prefs.connect(settings as unknown as ISettingRegistry.ISettings);
  return { settings, prefs };
}

const WITH_MODES: IAgentsInfo = {
  ...AGENTS,
  modes: ['plan', 'interactive', 'autopilot'].map(id => ({
    id: id as any,
    label: id,
    description: ''
  }))
};

describe('the preferences', () => {
  it('read the settings, counting anything unexpected as the default', () => {
    expect(
      Preferences.parse({
        defaultMode: 'autopilot',
        defaultAgent: ' a ',
        openPanelOnApproval: false
      })
    ).toEqual({
      defaultMode: 'autopilot',
      defaultAgent: 'a',
      openPanelOnApproval: false
    });
    expect(Preferences.parse({ defaultMode: 'yolo', defaultAgent: 3 })).toEqual(
      Preferences.DEFAULTS
    );
    expect(Preferences.parse(null)).toEqual(Preferences.DEFAULTS);
  });

  it('choose the agent and mode of a new conversation when the server offers them', () => {
    const wish = {
      defaultMode: 'autopilot' as const,
      defaultAgent: 'a',
      openPanelOnApproval: true
    };
    expect(initialSettings(WITH_MODES, wish)).toMatchObject({
      agentId: 'a',
      mode: 'autopilot'
    });
    // An agent or mode the server does not offer gives way to its default.
    expect(
      initialSettings(
        { ...WITH_MODES, agents: [AGENTS.agents[1]], modes: [] },
        wish
      )
    ).toMatchObject({ agentId: 'b', mode: 'plan' });
  });

  it('apply live to the next conversation, never over what the person chose', async () => {
    const { settings, prefs } = preferences({ defaultMode: 'interactive' });
    const { chat } = model(
      { agents: () => ok(WITH_MODES), conversations: () => ok([]) },
      prefs
    );
    await chat.load();
    expect(chat.settings.mode).toBe('interactive');
    let changes = 0;
    chat.changed.connect(() => changes++);
    settings.set({ defaultMode: 'autopilot', defaultAgent: 'a' });
    expect(chat.settings).toMatchObject({ mode: 'autopilot', agentId: 'a' });
    expect(changes).toBeGreaterThan(0);
    await chat.update({ mode: 'plan' });
    settings.set({ defaultMode: 'interactive', defaultAgent: 'b' });
    expect(chat.settings).toMatchObject({ mode: 'plan', agentId: 'b' });
  });

  it('say so when the default agent is not one the server offers', async () => {
    const { settings, prefs } = preferences({ defaultAgent: 'nope' });
    const { chat } = model(
      { agents: () => ok(WITH_MODES), conversations: () => ok([]) },
      prefs
    );
    await chat.load();
    expect(chat.settings.agentId).toBe('b');
    expect(chat.notice).toBe(
      'Your default agent "nope" (Settings Editor, Copilot) is not offered by this server, so B is used. The Agent menu lists the agents on offer: point at one to see its id.'
    );
    settings.set({ defaultAgent: 'a' });
    expect(chat.notice).toBe('');
    expect(chat.settings.agentId).toBe('a');
  });

  it("fall back to the server's defaults when its policy refuses them", async () => {
    const { prefs } = preferences({ defaultMode: 'autopilot' });
    const created: unknown[] = [];
    const { chat } = model(
      {
        agents: () => ok(WITH_MODES),
        conversations: () => ok([]),
        createConversation: (s: any) => {
          created.push(s.mode);
          return s.mode === 'autopilot'
            ? refused('not-permitted')
            : ok(conversation('c2', { ...s, title: null }));
        },
        sendMessage: () => refused('conversation-busy')
      },
      prefs
    );
    await chat.load();
    expect(chat.settings.mode).toBe('autopilot');
    expect(await chat.send('hello')).toBe(false);
    expect(created).toEqual(['autopilot', 'plan']);
    expect(chat.settings.mode).toBe('plan');
    expect(chat.conversation?.id).toBe('c2');
  });

  it('never replace a mode the person chose when the server refuses it', async () => {
    const { prefs } = preferences({});
    const created: unknown[] = [];
    const { chat } = model(
      {
        agents: () => ok(WITH_MODES),
        conversations: () => ok([]),
        createConversation: (s: any) => {
          created.push(s.mode);
          return refused('not-permitted');
        }
      },
      prefs
    );
    await chat.load();
    await chat.update({ mode: 'autopilot' });
    expect(await chat.send('hello')).toBe(false);
    expect(created).toEqual(['autopilot']);
    expect(chat.settings.mode).toBe('autopilot');
  });
});

describe('a refusal that is not about the preferences', () => {
  it('keeps the preferred settings when the server refuses its defaults too', async () => {
    const { prefs } = preferences({ defaultMode: 'autopilot' });
    const created: unknown[] = [];
    const { chat } = model(
      {
        agents: () => ok(WITH_MODES),
        conversations: () => ok([]),
        createConversation: (s: any) => {
          created.push(s.mode);
          return refused('not-permitted');
        }
      },
      prefs
    );
    await chat.load();
    expect(await chat.send('hello')).toBe(false);
    expect(created).toEqual(['autopilot', 'plan']);
    expect(chat.settings.mode).toBe('autopilot');
    expect(chat.conversation).toBeNull();
  });
});
