// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type {
  Action,
  ApprovalMode,
  ContextRef
} from './generated/vocabulary.js';

/**
 * The one client of the server's `copilot/api/` endpoints, and the types of
 * what they take and return.
 *
 * Every call resolves to an {@link Outcome}: the result, or a refusal
 * `{error: {code, message}}` as the server sends it. A request the server did
 * not answer, or answered with neither, resolves to a refusal with one of
 * the client's own codes ({@link ClientCodes}); no call throws for either.
 */

/**
 * The action names of docs/protocol.md section 1.
 */
export namespace Actions {
  export const getContext: Action = 'jupyter_copilot.notebook.get-context';
  export const editCellInvoke: Action =
    'jupyter_copilot.notebook.edit-cell.invoke';
  export const editCellAbort: Action =
    'jupyter_copilot.notebook.edit-cell.abort';
  export const insertCellInvoke: Action =
    'jupyter_copilot.notebook.insert-cell.invoke';
  export const insertCellAbort: Action =
    'jupyter_copilot.notebook.insert-cell.abort';
  export const runCellInvoke: Action =
    'jupyter_copilot.notebook.run-cell.invoke';
  export const runCellAbort: Action = 'jupyter_copilot.notebook.run-cell.abort';
  export const readCells: Action = 'jupyter_copilot.notebook.read-cells';
}

/**
 * Where an action of a page or tool is handled.
 */
export interface IActionRef {
  action: string;
  extensionName: string;
  iframeType: string;
}

/**
 * A page manifest (docs/protocol.md section 2).
 */
export interface IPageManifest {
  name: string;
  pageType: string;
  description: string;
  featureSwitch: string;
  /** A regular expression source applied to the page path. */
  match: string;
  getContext: IActionRef;
}

/**
 * A tool definition (docs/protocol.md section 2).
 */
export interface IToolDefinition {
  name: string;
  description: string;
  featureSwitch: string;
  copilotPages: string[];
  parameters: Record<string, unknown>;
  invoke: IActionRef;
  abort?: IActionRef;
}

/**
 * The reply of `GET copilot/api/manifest`; both lists are empty when the
 * feature switch is off.
 */
export interface IManifest {
  pages: IPageManifest[];
  tools: IToolDefinition[];
}

/**
 * The reply of `GET copilot/api/status` (docs/protocol.md section 3).
 */
export interface IStatus {
  version: string;
  enabled: boolean;
  toolsEnabled: boolean;
  killSwitch: { engaged: boolean; source: 'config' | 'file' | null };
  pages: number;
  rtc: boolean;
  /**
   * The names of the settings that did not validate; when there are any,
   * agents and tools are off (docs/admin.md, "Invalid settings").
   */
  configErrors: string[];
}

/**
 * The body of `POST copilot/api/actions/<action>`.
 */
export interface IActionBody {
  data: Record<string, unknown>;
  pageId?: string;
  callId?: string;
}

/**
 * Why a selected cell's source was left out of its context entry.
 */
export interface IOmitted {
  reason: 'over-budget' | 'unencodable';
  sourceBytes: number | null;
  budgetBytes?: number;
}

/**
 * The value of the `notebook_view_state` entry.
 */
export interface IViewStateValue {
  artifactId: string;
  viewType: string;
  permissionMode: 'edit' | 'read-only';
  selectedCellCount: number;
  kernelLanguage: string | null;
}

/**
 * The value of the `notebook_selected_cell` entry.
 */
export interface ISelectedCellValue {
  artifactId: string;
  cellId: string;
  cellType: 'code' | 'markdown' | 'raw';
  language: string | null;
  source?: string;
  expectedSourceHash?: string;
}

/**
 * A context entry of get-context (docs/protocol.md section 4.1).
 */
export interface IContextEntry<T = unknown> {
  name: string;
  description: string;
  value: T;
  reference?: { label: string; icon: string };
  omitted?: IOmitted;
}

/**
 * The result of get-context.
 */
export interface IGetContextResult {
  customContext: IContextEntry[];
}

/**
 * A refusal (docs/protocol.md section 7): the server's `{"error": {"code", "message"}}`,
 * or one of {@link ClientCodes} when the server gave none.
 */
export interface IRefusal {
  code: string;
  message: string;
}

/**
 * The outcome of a request: a result or a refusal, never both.
 */
export type Outcome<T> =
  { result: T; error?: undefined } | { result?: undefined; error: IRefusal };

/**
 * The outcome of an action (docs/protocol.md section 7).
 */
export type ActionOutcome<T> = Outcome<T>;

/**
 * The refusal codes of the client itself, for requests the server did not
 * refuse.
 */
export namespace ClientCodes {
  /** The server could not be reached (or the request was aborted). */
  export const UNREACHABLE = 'unreachable';
  /** The server answered with neither the expected reply nor a refusal. */
  export const BAD_REPLY = 'bad-reply';

  /**
   * Whether a refusal is the client's own rather than the server's.
   */
  export function isOwn(error: IRefusal): boolean {
    return error.code === UNREACHABLE || error.code === BAD_REPLY;
  }
}

/**
 * The person's decision on an approval request: allow once or deny, or
 * (for an agent's own permission request) one of the options it offered.
 */
export type ApprovalDecision = 'allow' | 'deny' | { optionId: string };

/**
 * The reply to a decision the server accepted.
 */
export interface IApprovalDecided {
  requestId: string;
  /** `allowed` or `denied` for an edit request; what the server said otherwise. */
  outcome: string;
}

/**
 * The person's decision on a file review: write the proposal, or drop it.
 */
export type FileReviewDecision = 'keep' | 'undo';

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
  /**
   * Why the agent cannot start on this server (not installed, with the
   * install command), or `null` when it can; such an agent cannot be chosen.
   * Absent from older servers.
   */
  unavailable?: string | null;
}

/**
 * One model a person may bring their own key for (`GET personal-keys`).
 */
export interface IPersonalKeyModel {
  id: string;
  label: string;
  /** Whether the person stored a key; the key itself never comes back. */
  keySet: boolean;
}

/**
 * The reply of `GET copilot/api/personal-keys` (docs/admin.md, "Personal
 * keys"): `allowed` is false, with no models, when the administrator does
 * not allow personal keys.
 */
export interface IPersonalKeysInfo {
  allowed: boolean;
  models: IPersonalKeyModel[];
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
  id: ContextRef;
  label: string;
  /** What granting it allows, in one sentence. */
  allows: string;
}

/**
 * An approval mode of a conversation: `plan`, `interactive` or `autopilot`.
 */
export interface IModeInfo {
  id: ApprovalMode;
  label: string;
  description: string;
}

/**
 * What the server's administrator allows conversations to use
 * (docs/admin.md, "Policy"). The lists of {@link IAgentsInfo} already hold
 * only what is allowed; a choice outside them is refused with
 * `not-permitted`.
 */
export interface IPolicyInfo {
  allowedAgents: string[];
  allowedModes: ApprovalMode[];
  allowedContextRefs: ContextRef[];
  /** Whether the administrator narrowed any of the three. */
  restricted: boolean;
}

/**
 * The reply of `GET copilot/api/agents`: only the agents, context references
 * and modes the administrator's policy allows.
 */
export interface IAgentsInfo {
  agents: IAgent[];
  defaultAgent: string | null;
  contextRefs: IContextRefInfo[];
  modes: IModeInfo[];
  /** `mode` is `null` when the policy allows no mode at all. */
  defaults: { contextRefs: ContextRef[]; mode: ApprovalMode | null };
  /** The administrator's policy; absent from older servers. */
  policy?: IPolicyInfo;
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
  contextRefs: ContextRef[];
  /** Empty until the agents have loaded. */
  mode: ApprovalMode | '';
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
  /** The notebooks its messages came from, by path; absent from older servers. */
  notebooks?: string[];
  /** Whether an archived conversation can be picked up again (`resume`). */
  resumable?: boolean;
}

/**
 * The body of a message: the text as typed and the attached cell.
 */
export interface IMessageBody {
  text: string;
  pageId: string;
  attachment: {
    artifactId: string;
    cellId: string;
    expectedSourceHash: string;
  } | null;
  /** The chips added with `@`, Fix or Explain (docs/conversations.md, "Context chips"). */
  references?: Record<string, unknown>[];
}

/**
 * One variable of the active notebook's kernel, as `GET variables` lists it.
 */
export interface IVariableInfo {
  name: string;
  type: string;
  shape?: number[];
  length?: number;
}

/**
 * The client of the server's `copilot/api/` endpoints. One is made when the
 * plugin activates and handed to each model.
 */
export class CopilotApi {
  /**
   * @param serverSettings - The server settings; the defaults when omitted.
   */
  constructor(serverSettings?: ServerConnection.ISettings) {
    this.serverSettings = serverSettings ?? ServerConnection.makeSettings();
  }

  /**
   * The settings of the server this client talks to.
   */
  readonly serverSettings: ServerConnection.ISettings;

  /**
   * `GET manifest`: the page and tool registry; both lists are empty when
   * the feature switch is off.
   */
  manifest(): Promise<Outcome<IManifest>> {
    return this._json<IManifest>('GET', 'manifest');
  }

  /**
   * `GET status`: the server status.
   */
  status(): Promise<Outcome<IStatus>> {
    return this._json<IStatus>('GET', 'status');
  }

  /**
   * `POST actions/<action>`: run an action through the server's dispatcher.
   * Any reply that carries `{result}` or `{error: {code, message}}`, whatever
   * its HTTP status, is the outcome.
   *
   * @param action - The action name.
   * @param body - The action data and optional page and call ids.
   */
  async action<T = unknown>(
    action: string,
    body: IActionBody
  ): Promise<Outcome<T>> {
    const response = await this._fetch(
      'POST',
      `actions/${encodeURIComponent(action)}`,
      body
    );
    if (!response) {
      return Private.refusal(ClientCodes.UNREACHABLE);
    }
    const parsed = await Private.readJSON(response);
    return Private.isOutcome(parsed)
      ? (parsed as Outcome<T>)
      : Private.refusal();
  }

  /**
   * `POST approvals/<requestId>` with `{"decision"}` or `{"optionId"}`:
   * decide an approval request. Refusals: `denied` when another user
   * decides, `aborted` when the request is unknown or already ended,
   * `invalid-input`.
   *
   * @param requestId - The request, as the `approval` message gave it.
   * @param decision - Allow once, deny, or a permission option.
   */
  async decideApproval(
    requestId: string,
    decision: ApprovalDecision
  ): Promise<Outcome<IApprovalDecided>> {
    const body =
      typeof decision === 'string'
        ? { decision }
        : { optionId: decision.optionId };
    const reply = await this._json<Record<string, unknown>>(
      'POST',
      `approvals/${encodeURIComponent(requestId)}`,
      body,
      { anyReply: true }
    );
    if (reply.error) {
      return reply;
    }
    const outcome =
      typeof reply.result.outcome === 'string' ? reply.result.outcome : '';
    return { result: { requestId, outcome } };
  }

  /**
   * `POST file-reviews/<reviewId>` with `{"decision"}`: decide a file
   * review. The server writes the file on `keep`, only if it still holds
   * the text the proposal was made against. Refusals: `stale-source`,
   * `kill-switch`, `read-only`, `aborted` when the review is already
   * decided or withdrawn, `outside-root`, `denied`.
   *
   * @param reviewId - The review, as the `file-review` message gave it.
   * @param decision - Keep or undo.
   */
  async decideFileReview(
    reviewId: string,
    decision: FileReviewDecision
  ): Promise<Outcome<{ decision: FileReviewDecision }>> {
    const path = `file-reviews/${encodeURIComponent(reviewId)}`;
    const reply = await this._json(
      'POST',
      path,
      { decision },
      { anyReply: true }
    );
    return reply.error ? reply : { result: { decision } };
  }

  /**
   * `GET agents`: the agents, context references and modes.
   */
  agents(): Promise<Outcome<IAgentsInfo>> {
    return this._json<IAgentsInfo>('GET', 'agents');
  }

  /**
   * `GET personal-keys`: the models the person may bring a key for, and
   * whether they set one.
   */
  personalKeys(): Promise<Outcome<IPersonalKeysInfo>> {
    return this._json<IPersonalKeysInfo>('GET', 'personal-keys');
  }

  /**
   * `PUT personal-keys/<id>`: store or replace the person's key for a model.
   * Refusals: `not-permitted` (personal keys are off), `invalid-input`.
   */
  setPersonalKey(
    modelId: string,
    key: string
  ): Promise<Outcome<IPersonalKeyModel>> {
    return this._json<IPersonalKeyModel>(
      'PUT',
      `personal-keys/${encodeURIComponent(modelId)}`,
      { key }
    );
  }

  /**
   * `DELETE personal-keys/<id>`: forget the person's key for a model.
   */
  removePersonalKey(modelId: string): Promise<Outcome<IPersonalKeyModel>> {
    return this._json<IPersonalKeyModel>(
      'DELETE',
      `personal-keys/${encodeURIComponent(modelId)}`
    );
  }

  /**
   * `GET variables`: the names, types and shapes of the active notebook's
   * kernel variables, for `@` in the composer. Refusals: `not-permitted`,
   * `no-active-session`, `kernel-busy`, `unsupported-kernel`, `timeout`.
   */
  async variables(): Promise<Outcome<IVariableInfo[]>> {
    const reply = await this._json<{ variables?: IVariableInfo[] }>(
      'GET',
      'variables'
    );
    return reply.error ? reply : { result: reply.result.variables ?? [] };
  }

  /**
   * `GET conversations`: the person's conversations, newest first.
   */
  async conversations(): Promise<Outcome<IConversation[]>> {
    const reply = await this._json<{ conversations?: IConversation[] }>(
      'GET',
      'conversations'
    );
    return reply.error ? reply : { result: reply.result.conversations ?? [] };
  }

  /**
   * `GET conversations/<id>`: a conversation and its turns, not yet parsed.
   */
  conversation(
    id: string
  ): Promise<Outcome<{ conversation: IConversation; turns: unknown[] }>> {
    return this._json('GET', Private.conversation(id));
  }

  /**
   * `POST conversations`: a conversation whose agent starts at its first
   * message.
   */
  createConversation(
    settings: IConversationSettings
  ): Promise<Outcome<IConversation>> {
    // No mode (the policy allows none): the server answers `not-permitted`.
    const { mode, ...rest } = settings;
    return Private.conversationOf(
      this._json('POST', 'conversations', mode ? settings : rest)
    );
  }

  /**
   * `PATCH conversations/<id>`: change the mode or context references, and
   * before the first message the agent or Chat-only too.
   */
  updateConversation(
    id: string,
    changes: Partial<IConversationSettings>
  ): Promise<Outcome<IConversation>> {
    return Private.conversationOf(
      this._json('PATCH', Private.conversation(id), changes)
    );
  }

  /**
   * `POST conversations/<id>/messages`: the response whose body streams the
   * reply as NDJSON, once the server has accepted the message.
   */
  async sendMessage(
    id: string,
    body: IMessageBody,
    signal: AbortSignal
  ): Promise<Outcome<Response>> {
    const path = Private.conversation(id, 'messages');
    const response = await this._fetch('POST', path, body, signal);
    if (!response) {
      return Private.refusal(ClientCodes.UNREACHABLE);
    }
    if (!response.ok) {
      return Private.refusalOf(await Private.readJSON(response));
    }
    return response.body ? { result: response } : Private.refusal();
  }

  /**
   * `POST conversations/<id>/cancel`: stop the running reply; whether one
   * was running.
   */
  async cancelReply(id: string): Promise<Outcome<boolean>> {
    const path = Private.conversation(id, 'cancel');
    const reply = await this._json<{ cancelled?: boolean }>('POST', path, {});
    return reply.error ? reply : { result: !!reply.result.cancelled };
  }

  /**
   * `GET conversations/<id>/export`: the conversation as Markdown, and the
   * file name the server gives it.
   */
  async exportConversation(
    id: string
  ): Promise<Outcome<{ text: string; filename: string }>> {
    const response = await this._fetch(
      'GET',
      Private.conversation(id, 'export')
    );
    if (!response) {
      return Private.refusal(ClientCodes.UNREACHABLE);
    }
    if (!response.ok) {
      return Private.refusalOf(await Private.readJSON(response));
    }
    const disposition = response.headers.get('Content-Disposition') ?? '';
    // The quote written as \u0022: a plain one would read as a text to translate.
    const name = /filename=\u0022([^\u0022]+)\u0022/.exec(disposition)?.[1];
    return {
      result: { text: await response.text(), filename: name ?? 'copilot.md' }
    };
  }

  /**
   * `DELETE conversations/<id>`: forget it, in the store too.
   */
  deleteConversation(id: string): Promise<Outcome<{ deleted: boolean }>> {
    return this._json('DELETE', Private.conversation(id));
  }

  /**
   * `POST conversations/<id>/resume`: pick an archived conversation up
   * again; its agent loads its earlier session at the next message.
   */
  resumeConversation(
    id: string
  ): Promise<Outcome<{ conversation: IConversation; turns: unknown[] }>> {
    return this._json('POST', Private.conversation(id, 'resume'), {});
  }

  /**
   * `POST conversations/<id>/archive`: make it read-only, still listed.
   */
  archiveConversation(id: string): Promise<Outcome<IConversation>> {
    return Private.conversationOf(
      this._json('POST', Private.conversation(id, 'archive'), {})
    );
  }

  /**
   * Send a request and parse its JSON reply as the result.
   *
   * @param options.anyReply - Take any reply of a successful request as the
   *   result, `{}` when it is not a JSON object.
   */
  private async _json<T>(
    method: string,
    path: string,
    body?: unknown,
    options: { anyReply?: boolean } = {}
  ): Promise<Outcome<T>> {
    const response = await this._fetch(method, path, body);
    if (!response) {
      return Private.refusal(ClientCodes.UNREACHABLE);
    }
    const parsed = await Private.readJSON(response);
    if (!response.ok) {
      return Private.refusalOf(parsed);
    }
    if (typeof parsed === 'object' && parsed !== null) {
      return { result: parsed as T };
    }
    return options.anyReply ? { result: {} as T } : Private.refusal();
  }

  /**
   * Send a request to a path under `copilot/api/`; `null` when the server
   * cannot be reached.
   */
  private async _fetch(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal
  ): Promise<Response | null> {
    const s = this.serverSettings;
    const init: RequestInit = { method, signal };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
    }
    try {
      return await ServerConnection.makeRequest(
        URLExt.join(s.baseUrl, 'copilot/api', path),
        init,
        s
      );
    } catch {
      return null;
    }
  }
}

namespace Private {
  /**
   * A refusal of the client's own: by default for a reply that is neither
   * the expected one nor a refusal.
   */
  export function refusal(code: string = ClientCodes.BAD_REPLY): {
    error: IRefusal;
  } {
    return { error: { code, message: '' } };
  }

  /**
   * The refusal a failed request's parsed reply carries, or a bad reply.
   */
  export function refusalOf(reply: unknown): { error: IRefusal } {
    const error = (
      reply as { error?: { code?: unknown; message?: unknown } } | null
    )?.error;
    if (typeof error?.code === 'string') {
      return {
        error: { code: error.code, message: String(error.message ?? '') }
      };
    }
    return refusal();
  }

  /**
   * The path of a conversation, or of one of its verbs.
   */
  export function conversation(id: string, verb?: string): string {
    const base = `conversations/${encodeURIComponent(id)}`;
    return verb ? `${base}/${verb}` : base;
  }

  /**
   * The conversation of a `{"conversation"}` reply.
   */
  export async function conversationOf(
    reply: Promise<Outcome<{ conversation: IConversation }>>
  ): Promise<Outcome<IConversation>> {
    const r = await reply;
    return r.error ? r : { result: r.result.conversation };
  }

  /**
   * The parsed body of a reply, or `null` when it is not JSON.
   */
  export async function readJSON(response: Response): Promise<unknown> {
    let text: string;
    try {
      text = await response.text();
    } catch {
      return null;
    }
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      return null;
    }
  }

  /**
   * Whether a parsed reply is `{result}` or `{error: {code, message}}`.
   */
  export function isOutcome(reply: unknown): boolean {
    if (typeof reply !== 'object' || reply === null) {
      return false;
    }
    const r = reply as { result?: unknown; error?: { code?: unknown } };
    if ('result' in r) {
      return true;
    }
    return typeof r.error === 'object' && typeof r.error?.code === 'string';
  }
}
