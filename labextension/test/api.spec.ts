// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The one API client (api.ts): every call resolves to a result or a
 * refusal `{error: {code, message}}`, and none throws.
 */

import { ServerConnection } from '@jupyterlab/services';

import { ClientCodes, CopilotApi } from '../src/api';

interface ISent {
  method: string;
  url: string;
  body: unknown;
}

/**
 * A client whose server answers each request with the next reply; a reply
 * `null` is a server that cannot be reached.
 */
function client(...replies: (Response | null)[]): {
  api: CopilotApi;
  sent: ISent[];
} {
  const sent: ISent[] = [];
  const fetch = async (
    input: RequestInfo | URL,
    init?: RequestInit
  ): Promise<Response> => {
    const request = new Request(input, init);
    const text = await request.text();
    // Without the query string that the settings may add to defeat caches.
    const url = request.url.split('?')[0];
    sent.push({
      method: request.method,
      url,
      body: text ? JSON.parse(text) : null
    });
    const reply = replies.shift();
    if (!reply) {
      throw new TypeError('Failed to fetch');
    }
    return reply;
  };
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://localhost:8888/base/',
    wsUrl: 'ws://localhost:8888/base/',
    fetch: fetch as typeof globalThis.fetch,
    Request,
    Headers
  });
  return { api: new CopilotApi(settings), sent };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' }
  });
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: { 'Content-Type': 'text/html' }
  });
}

const UNREACHABLE = { error: { code: ClientCodes.UNREACHABLE, message: '' } };
const BAD_REPLY = { error: { code: ClientCodes.BAD_REPLY, message: '' } };
const CONVERSATION = { id: 'c/1', title: null, archived: false };

describe('CopilotApi', () => {
  it('posts an action and returns its outcome, refusals included, whatever the status', async () => {
    const refusal = {
      error: { code: 'stale-source', message: 'The cell changed.' }
    };
    const { api, sent } = client(
      json(200, { result: { customContext: [] } }),
      json(409, refusal)
    );
    const body = { data: {}, pageId: 'p' };
    expect(
      await api.action('jupyter_copilot.notebook.get-context', body)
    ).toEqual({
      result: { customContext: [] }
    });
    expect(await api.action('a b', body)).toEqual(refusal);
    expect(sent.map(s => [s.method, s.url])).toEqual([
      [
        'POST',
        'http://localhost:8888/base/copilot/api/actions/jupyter_copilot.notebook.get-context'
      ],
      ['POST', 'http://localhost:8888/base/copilot/api/actions/a%20b']
    ]);
    expect(sent[0].body).toEqual(body);
  });

  it('gives its own refusals for no answer and for a reply that is neither', async () => {
    const { api } = client(
      null,
      text(502, '<html>Bad gateway</html>'),
      json(200, { other: 1 }),
      text(200, 'not json'),
      json(500, { error: 'no code' })
    );
    expect(await api.action('x', { data: {} })).toEqual(UNREACHABLE);
    expect(await api.action('x', { data: {} })).toEqual(BAD_REPLY);
    expect(await api.action('x', { data: {} })).toEqual(BAD_REPLY);
    expect(await api.manifest()).toEqual(BAD_REPLY);
    expect(await api.status()).toEqual(BAD_REPLY);
    expect(ClientCodes.isOwn(UNREACHABLE.error)).toBe(true);
    expect(ClientCodes.isOwn(BAD_REPLY.error)).toBe(true);
    expect(ClientCodes.isOwn({ code: 'stale-source', message: '' })).toBe(
      false
    );
  });

  it('returns the refusal a failed request carries', async () => {
    const busy = {
      error: { code: 'conversation-busy', message: 'A reply is running.' }
    };
    const { api } = client(
      json(409, busy),
      json(404, { error: { code: 'gone', message: 7 } })
    );
    expect(
      await api.createConversation({
        agentId: 'a',
        chatOnly: false,
        contextRefs: [],
        mode: 'plan'
      })
    ).toEqual(busy);
    expect(await api.conversation('c')).toEqual({
      error: { code: 'gone', message: '7' }
    });
  });

  it('reads the conversations and a conversation', async () => {
    const { api, sent } = client(
      json(200, { conversations: [CONVERSATION] }),
      json(200, {}),
      json(200, { conversation: CONVERSATION, turns: [] }),
      json(200, { conversation: CONVERSATION }),
      json(200, { conversation: CONVERSATION }),
      json(200, { cancelled: true }),
      json(200, {})
    );
    expect(await api.conversations()).toEqual({ result: [CONVERSATION] });
    expect(await api.conversations()).toEqual({ result: [] });
    expect(await api.conversation('c/1')).toEqual({
      result: { conversation: CONVERSATION, turns: [] }
    });
    expect(await api.updateConversation('c/1', { mode: 'plan' })).toEqual({
      result: CONVERSATION
    });
    expect(await api.archiveConversation('c/1')).toEqual({
      result: CONVERSATION
    });
    expect(await api.cancelReply('c/1')).toEqual({ result: true });
    expect(await api.cancelReply('c/1')).toEqual({ result: false });
    const base = 'http://localhost:8888/base/copilot/api/';
    expect(sent.map(s => [s.method, s.url.slice(base.length), s.body])).toEqual(
      [
        ['GET', 'conversations', null],
        ['GET', 'conversations', null],
        ['GET', 'conversations/c%2F1', null],
        ['PATCH', 'conversations/c%2F1', { mode: 'plan' }],
        ['POST', 'conversations/c%2F1/archive', {}],
        ['POST', 'conversations/c%2F1/cancel', {}],
        ['POST', 'conversations/c%2F1/cancel', {}]
      ]
    );
  });

  it('sends a message and returns the streaming response once accepted', async () => {
    const stream = new Response('{"type":"turn"}\n', { status: 200 });
    const stale = {
      error: { code: 'stale-source', message: 'Attach it again.' }
    };
    const { api, sent } = client(stream, json(409, stale), null);
    const body = { text: 'hi', pageId: 'p', attachment: null };
    const signal = new AbortController().signal;
    const accepted = await api.sendMessage('c', body, signal);
    expect(await accepted.result?.text()).toBe('{"type":"turn"}\n');
    expect(await api.sendMessage('c', body, signal)).toEqual(stale);
    expect(await api.sendMessage('c', body, signal)).toEqual(UNREACHABLE);
    expect(sent[0].url).toBe(
      'http://localhost:8888/base/copilot/api/conversations/c/messages'
    );
    expect(sent[0].body).toEqual(body);
  });

  it('decides approvals and file reviews', async () => {
    const denied = { error: { code: 'denied', message: 'Not yours.' } };
    const { api, sent } = client(
      json(200, { outcome: 'allowed' }),
      text(200, ''),
      json(403, denied),
      text(500, 'oops'),
      json(200, {}),
      json(409, { error: { code: 'aborted', message: '' } })
    );
    expect(await api.decideApproval('r 1', 'allow')).toEqual({
      result: { requestId: 'r 1', outcome: 'allowed' }
    });
    expect(await api.decideApproval('r', { optionId: 'o' })).toEqual({
      result: { requestId: 'r', outcome: '' }
    });
    expect(await api.decideApproval('r', 'deny')).toEqual(denied);
    expect(await api.decideApproval('r', 'deny')).toEqual(BAD_REPLY);
    expect(await api.decideFileReview('f', 'keep')).toEqual({
      result: { decision: 'keep' }
    });
    expect(await api.decideFileReview('f', 'undo')).toEqual({
      error: { code: 'aborted', message: '' }
    });
    const base = 'http://localhost:8888/base/copilot/api/';
    expect(sent.map(s => [s.url.slice(base.length), s.body])).toEqual([
      ['approvals/r%201', { decision: 'allow' }],
      ['approvals/r', { optionId: 'o' }],
      ['approvals/r', { decision: 'deny' }],
      ['approvals/r', { decision: 'deny' }],
      ['file-reviews/f', { decision: 'keep' }],
      ['file-reviews/f', { decision: 'undo' }]
    ]);
  });
});
