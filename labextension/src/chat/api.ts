// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * An agent the server can start (`GET copilot/api/agents`).
 */
export interface IAgent {
  id: string;
  label: string;
  /** One line for a person. */
  description: string;
  /** Whether the server runs the agent in its sandbox; absent from older servers. */
  guarded?: boolean;
  /** What a person should know before choosing the agent, in one line; `null` when nothing. */
  warning?: string | null;
}

/**
 * How the server confines the agents' processes: `auto` uses a sandbox when
 * one is available, `required` starts no agent without one, `off` uses none.
 */
export interface ISandboxInfo {
  mode: 'auto' | 'required' | 'off';
  /** Whether a sandbox is in use now. */
  active: boolean;
  /** The state in one line for a person. */
  text: string;
}

/**
 * A context reference: what a conversation may let its agent read.
 */
export interface IContextRefInfo {
  id: string;
  label: string;
  /** What granting it allows, in one sentence. */
  allows: string;
}

/**
 * An approval mode of a conversation: `plan`, `interactive` or `autopilot`.
 */
export interface IModeInfo {
  id: string;
  label: string;
  description: string;
}

/**
 * The reply of `GET copilot/api/agents`.
 */
export interface IAgentsInfo {
  agents: IAgent[];
  defaultAgent: string | null;
  contextRefs: IContextRefInfo[];
  modes: IModeInfo[];
  defaults: { contextRefs: string[]; mode: string };
  /** Whether the server lets agents have tools at all. */
  toolsEnabled: boolean;
  /** The sandbox of the agents' processes; absent from older servers. */
  sandbox?: ISandboxInfo;
}

/**
 * What a person chooses for a conversation. The agent and Chat-only are
 * fixed at its first message; the rest may change at any time.
 */
export interface IConversationSettings {
  agentId: string;
  chatOnly: boolean;
  contextRefs: string[];
  mode: string;
}

/**
 * The settings before the agents have loaded.
 */
export const NO_SETTINGS: IConversationSettings = {
  agentId: '',
  chatOnly: false,
  contextRefs: [],
  mode: ''
};

/**
 * The settings a new conversation starts with: the server's default agent
 * and defaults, not Chat-only.
 */
export function initialSettings(info: IAgentsInfo): IConversationSettings {
  return {
    agentId: info.defaultAgent ?? info.agents[0]?.id ?? '',
    chatOnly: false,
    contextRefs: [...(info.defaults?.contextRefs ?? [])],
    mode: info.defaults?.mode ?? 'interactive'
  };
}

/**
 * A conversation as the server describes it.
 */
export interface IConversation extends IConversationSettings {
  id: string;
  agentLabel: string;
  /**
   * `null` before the first message, then whether the agent connected to
   * the tools it was offered.
   */
  toolsAttached: boolean | null;
  /** `null` before the first message, then whether the agent was offered tools. */
  toolsOffered?: boolean | null;
  state: 'idle' | 'running';
  archived: boolean;
  createdAt: string;
  /** The start of the first message, `null` before it. */
  title: string | null;
}

/**
 * The body of a message: the text as typed and the attached cell.
 */
export interface IMessageBody {
  text: string;
  pageId: string;
  attachment: { artifactId: string; cellId: string; expectedSourceHash: string } | null;
}

/**
 * A refusal of the conversations API, `{"error": {"code", "message"}}`.
 */
export class ChatApiError extends Error {
  /**
   * @param code - The refusal code, e.g. `conversation-busy`.
   * @param message - The server's words.
   * @param status - The HTTP status.
   */
  constructor(
    readonly code: string,
    message: string,
    readonly status: number
  ) {
    super(message);
  }
}

/**
 * The typed calls of the conversations API (docs/conversations.md). Each
 * throws a {@link ChatApiError} for a refusal and
 * `ServerConnection.NetworkError` when the server cannot be reached.
 */
export namespace ChatApi {
  /**
   * `GET agents`: the agents, context references and modes.
   */
  export function agents(s: ServerConnection.ISettings): Promise<IAgentsInfo> {
    return Private.json<IAgentsInfo>(s, 'agents', 'GET');
  }

  /**
   * `POST conversations`: a conversation whose agent starts at its first message.
   */
  export async function create(
    s: ServerConnection.ISettings,
    settings: IConversationSettings
  ): Promise<IConversation> {
    return (await Private.json<IReply>(s, 'conversations', 'POST', settings)).conversation;
  }

  /**
   * `GET conversations`: the person's conversations, newest first.
   */
  export async function list(s: ServerConnection.ISettings): Promise<IConversation[]> {
    const reply = await Private.json<{ conversations: IConversation[] }>(s, 'conversations', 'GET');
    return reply.conversations ?? [];
  }

  /**
   * `GET conversations/<id>`: a conversation and its turns, not yet parsed.
   */
  export function get(
    s: ServerConnection.ISettings,
    id: string
  ): Promise<{ conversation: IConversation; turns: unknown[] }> {
    return Private.json(s, Private.path(id), 'GET');
  }

  /**
   * The person's latest conversation with its turns; `null` when there is
   * none or it is archived.
   */
  export async function latestOpen(
    s: ServerConnection.ISettings
  ): Promise<{ conversation: IConversation; turns: unknown[] } | null> {
    const latest = (await list(s))[0];
    return latest && !latest.archived ? get(s, latest.id) : null;
  }

  /**
   * `PATCH conversations/<id>`: change the mode or context references, and
   * before the first message the agent or Chat-only too.
   */
  export async function patch(
    s: ServerConnection.ISettings,
    id: string,
    changes: Partial<IConversationSettings>
  ): Promise<IConversation> {
    return (await Private.json<IReply>(s, Private.path(id), 'PATCH', changes)).conversation;
  }

  /**
   * `POST conversations/<id>/messages`: the response whose body streams the
   * reply as NDJSON, once the server has accepted the message.
   */
  export async function send(
    s: ServerConnection.ISettings,
    id: string,
    body: IMessageBody,
    signal: AbortSignal
  ): Promise<Response> {
    const init = { method: 'POST', body: JSON.stringify(body), signal };
    const url = Private.url(s, Private.path(id, 'messages'));
    const response = await ServerConnection.makeRequest(url, init, s);
    if (!response.ok || !response.body) {
      throw await Private.refusal(response);
    }
    return response;
  }

  /**
   * `POST conversations/<id>/cancel`: stop the running reply.
   */
  export async function cancel(s: ServerConnection.ISettings, id: string): Promise<boolean> {
    const path = Private.path(id, 'cancel');
    const reply = await Private.json<{ cancelled?: boolean }>(s, path, 'POST', {});
    return !!reply.cancelled;
  }

  /**
   * `POST conversations/<id>/archive`: make it read-only, still listed.
   */
  export async function archive(s: ServerConnection.ISettings, id: string): Promise<IConversation> {
    return (await Private.json<IReply>(s, Private.path(id, 'archive'), 'POST', {})).conversation;
  }

  interface IReply {
    conversation: IConversation;
  }
}

namespace Private {
  /**
   * The path of a conversation, or of one of its verbs.
   */
  export function path(id: string, verb?: string): string {
    const base = `conversations/${encodeURIComponent(id)}`;
    return verb ? `${base}/${verb}` : base;
  }

  /**
   * The URL of a path under `copilot/api/`.
   */
  export function url(s: ServerConnection.ISettings, path: string): string {
    return URLExt.join(s.baseUrl, 'copilot/api', path);
  }

  /**
   * Send a request and parse a successful JSON reply.
   */
  export async function json<T>(
    s: ServerConnection.ISettings,
    path: string,
    method: string,
    body?: unknown
  ): Promise<T> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
    }
    const response = await ServerConnection.makeRequest(url(s, path), init, s);
    if (!response.ok) {
      throw await refusal(response);
    }
    return (await response.json()) as T;
  }

  /**
   * The refusal a failed reply carries, or a generic one.
   */
  export async function refusal(response: Response): Promise<ChatApiError> {
    let error: { code?: unknown; message?: unknown } | undefined;
    try {
      error = (await response.json())?.error;
    } catch {
      error = undefined;
    }
    const code = typeof error?.code === 'string' ? error.code : `http-${response.status}`;
    const message = typeof error?.message === 'string' ? error.message : '';
    return new ChatApiError(code, message, response.status);
  }
}
