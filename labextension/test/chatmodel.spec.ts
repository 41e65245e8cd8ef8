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
import type { ContextModel } from '../src/contextmodel';

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
  >
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
    detach: () => undefined
  } as unknown as ContextModel;
  const chat = new ChatModel({
    pageId: 'p',
    context,
    cellLabel: () => 'Cell',
    api
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
