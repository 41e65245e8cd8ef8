// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { ContextModel } from '../contextmodel';
import { wireReference } from '../contextmodel';
import type { Preferences } from '../preferences';
import {
  ClientCodes,
  CopilotApi,
  IAgentsInfo,
  IConversation,
  IConversationSettings,
  IMessageBody,
  IRefusal,
  Outcome
} from '../api';
import { followTurn } from './follow';
import { readStream } from './stream';
import { ChatTexts } from './texts';
import {
  abandonTurn,
  applyEvent,
  conversationTitle,
  ITurn,
  parseTurn,
  startTurn,
  StreamEvent
} from './transcript';

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
 * The settings a new conversation starts with: the person's preferred agent
 * and mode when the server offers them, else the server's default agent and
 * defaults; not Chat-only.
 *
 * @param info - What the server offers.
 * @param preferences - The person's preferences; none: the server's defaults.
 */
export function initialSettings(
  info: IAgentsInfo,
  preferences?: Preferences.IValues | null
): IConversationSettings {
  const agent = preferences?.defaultAgent;
  const mode = preferences?.defaultMode;
  // An agent the server lists as unavailable (not installed) is never a default.
  const startable = info.agents.filter(a => !a.unavailable);
  return {
    agentId:
      (agent && startable.some(a => a.id === agent) ? agent : null) ??
      info.defaultAgent ??
      startable[0]?.id ??
      '',
    chatOnly: false,
    contextRefs: [...(info.defaults?.contextRefs ?? [])],
    mode:
      (mode && (info.modes ?? []).some(m => m.id === mode) ? mode : null) ??
      (info.defaults ? (info.defaults.mode ?? '') : 'interactive')
  };
}

/**
 * The current conversation of the side panel: its settings, its turns and
 * the reply that streams. The conversation is created on the server at the
 * first Send; its agent and Chat-only are fixed from its first message on.
 */
export class ChatModel implements IDisposable {
  /**
   * Create the model; call {@link load} to fetch the agents.
   */
  constructor(options: ChatModel.IOptions) {
    this._api = options.api;
    this._pageId = options.pageId;
    this._context = options.context;
    this._cellLabel = options.cellLabel;
    this._trans = options.trans;
    this._preferences = options.preferences ?? null;
    this._preferences?.changed.connect(this._onPreferences, this);
  }

  /** The server's API client, for the Agent menu's own requests (personal keys). */
  get api(): CopilotApi {
    return this._api;
  }

  /** The agents, context references and modes; `null` before they load. */
  get catalog(): IAgentsInfo | null {
    return this._catalog;
  }

  /** The settings of the conversation, or of the next one before its first Send. */
  get settings(): IConversationSettings {
    return this._settings;
  }

  /** The conversation on the server; `null` before the first Send. */
  get conversation(): IConversation | null {
    return this._conversation;
  }

  /** The turns, oldest first. */
  get turns(): readonly ITurn[] {
    return this._turns;
  }

  /** Whether a reply is running. */
  get isRunning(): boolean {
    return this._running;
  }

  /** Whether the agent and Chat-only are fixed: the first message was sent. */
  get isFixed(): boolean {
    return (
      this._turns.length > 0 ||
      (this._conversation?.toolsAttached ?? null) !== null
    );
  }

  /** What went wrong with the last request, for a person; "" when nothing. */
  get notice(): string {
    return this._notice;
  }

  /** Emitted when anything but a turn's content changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Emitted with the index of a turn added or changed; `-1` when all were replaced. */
  get turnChanged(): ISignal<this, number> {
    return this._turnChanged;
  }

  /** Whether the model is disposed. */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Fetch the agents and pick up the person's latest conversation when it
   * is not archived. Loads once; after a failure the next call tries again.
   */
  load(): Promise<void> {
    this._loading ??= this._load();
    return this._loading;
  }

  /**
   * Change settings. Before the first message anything may change; after
   * it the agent and Chat-only stay, the mode and context references are
   * sent to the server, where they apply from the agent's next tool call.
   */
  async update(changes: Partial<IConversationSettings>): Promise<void> {
    const patch = { ...changes };
    if (this.isFixed) {
      delete patch.agentId;
      delete patch.chatOnly;
    }
    const before = this._settings;
    this._settings = { ...before, ...patch };
    for (const key of Object.keys(patch)) {
      this._chosen.add(key as keyof IConversationSettings);
    }
    this._setNotice('');
    const c = this._conversation;
    if (!c || Object.keys(patch).length === 0) {
      return;
    }
    const reply = await this._api.updateConversation(c.id, patch);
    if (reply.error) {
      this._settings = before;
      this._setNotice(ChatTexts.failure(reply.error, this._trans));
    } else {
      this._adopt(reply.result, c.id);
    }
  }

  /**
   * Send a message with the attached cell, if any, and stream the reply.
   * The attachment is dropped once the server accepted the message.
   *
   * @returns `false` when the message was refused before its turn started
   *   (the notice says why); `true` once its turn has ended.
   */
  async send(text: string): Promise<boolean> {
    if (this._running || !this._catalog || !text.trim()) {
      return false;
    }
    const gen = this._generation;
    const current = () => gen === this._generation;
    const attachment = this._context.attachment;
    const references = this._context.references;
    // The transcript names the attached cell, else the first cell a chip names.
    const chipCell = references.find(
      r => r.kind === 'cell' || r.kind === 'error'
    );
    const cell = attachment
      ? { cellId: attachment.cellId, label: this._cellLabel(attachment) }
      : chipCell && 'cellId' in chipCell
        ? { cellId: chipCell.cellId, label: chipCell.label }
        : null;
    this._turns = [...this._turns, startTurn({ text, attachment: cell })];
    const index = this._turns.length - 1;
    this._running = true;
    this._setNotice('');
    this._turnChanged.emit(index);
    const sent = await this._sendMessage(text, attachment, references);
    if (sent.error) {
      if (current()) {
        this._turns = this._turns.slice(0, index);
        this._running = false;
        this._turnChanged.emit(-1);
        this._setNotice(ChatTexts.failure(sent.error, this._trans));
      }
      return false;
    }
    const response = sent.result;
    if (this._context.attachment === attachment) {
      this._context.detach();
    }
    this._context.removeReferences(r => references.includes(r));
    const accepted = this._conversation;
    if (current() && accepted && accepted.title === null) {
      this._conversation = { ...accepted, title: conversationTitle(text) };
      this._changed.emit();
    }
    let ended = false;
    try {
      ended = await readStream(
        response,
        event => current() && this._apply(index, event)
      );
    } catch {
      // The connection broke off; the turn goes on on the server.
    }
    if (!ended && current()) {
      await this._follow(index);
    }
    if (current()) {
      this._running = false;
      const c = this._conversation;
      this._conversation = c && { ...c, state: 'idle' };
      this._changed.emit();
    }
    return true;
  }

  /**
   * Stop the running reply; its stream then ends with `cancelled`.
   */
  async stop(): Promise<void> {
    const c = this._conversation;
    if (!this._running || !c) {
      return;
    }
    const reply = await this._api.cancelReply(c.id);
    if (reply.error) {
      this._setNotice(ChatTexts.failure(reply.error, this._trans));
    }
  }

  /**
   * Archive the conversation when it has messages (it stays listed, read
   * only; a running reply is cancelled) and start an empty one with the
   * same settings.
   *
   * @returns `false` when the server could not be reached; nothing changed.
   */
  async newConversation(): Promise<boolean> {
    const c = this._conversation;
    if (c && this._turns.length > 0) {
      const reply = await this._api.archiveConversation(c.id);
      // A refusal (gone, or archived elsewhere) leaves nothing to keep;
      // only an unreachable server keeps the conversation, to try again.
      if (reply.error?.code === ClientCodes.UNREACHABLE) {
        this._setNotice(ChatTexts.failure(reply.error, this._trans));
        return false;
      }
      this._conversation = null;
    }
    this._generation++;
    this._abort?.abort();
    this._abort = null;
    this._turns = [];
    this._running = false;
    // What the person chose stays, but Chat only: a new conversation has
    // the notebook tools again (docs/conversations.md); the rest follows the
    // preferences of now.
    this._settings = { ...this._settings, chatOnly: false };
    this._applyPreferences();
    this._turnChanged.emit(-1);
    this._setNotice(this._preferenceProblem());
    return true;
  }

  /**
   * Make an earlier conversation, resumed on the server, the current one:
   * the current conversation is archived first when it has messages, as a
   * new conversation does.
   *
   * @returns `false` when the current conversation could not be archived.
   */
  async takeUp(
    conversation: IConversation,
    turns: readonly unknown[]
  ): Promise<boolean> {
    if (!(await this.newConversation())) {
      return false;
    }
    this._adopt(conversation, null);
    this._turns = turns.map(parseTurn).filter((t): t is ITurn => t !== null);
    this._turnChanged.emit(-1);
    return true;
  }

  /**
   * Stop reading and drop the signal connections.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._preferences?.changed.disconnect(this._onPreferences, this);
    this._generation++;
    this._abort?.abort();
    Signal.clearData(this);
  }

  private async _load(): Promise<void> {
    const reply = await this._api.agents();
    if (reply.error) {
      this._loading = null;
      this._setNotice(ChatTexts.failure(reply.error, this._trans));
      return;
    }
    this._catalog = reply.result;
    this._settings = initialSettings(this._catalog, this._preferences?.values);
    this._setNotice(this._preferenceProblem());
    await this._resume();
  }

  /**
   * Pick up the person's latest conversation unless it is archived, and
   * follow its reply when one is running.
   */
  private async _resume(): Promise<void> {
    // With nothing to pick up (or no answer) the panel starts empty; a person
    // who started a conversation meanwhile keeps it.
    const reply = await this._latestOpen();
    if (
      !reply ||
      this._conversation ||
      this._turns.length > 0 ||
      this._isDisposed
    ) {
      return;
    }
    this._adopt(reply.conversation, null);
    this._turns = reply.turns
      .map(parseTurn)
      .filter((t): t is ITurn => t !== null);
    this._turnChanged.emit(-1);
    const last = this._turns.length - 1;
    if (reply.conversation.state === 'running' && last >= 0) {
      const gen = this._generation;
      this._running = true;
      this._changed.emit();
      await this._follow(last);
      if (gen === this._generation) {
        this._running = false;
        this._changed.emit();
      }
    }
  }

  /**
   * The person's latest conversation with its turns; `null` when there is
   * none, it is archived, or the server did not answer.
   */
  private async _latestOpen(): Promise<{
    conversation: IConversation;
    turns: unknown[];
  } | null> {
    const list = await this._api.conversations();
    const latest = list.result?.[0];
    if (!latest || latest.archived) {
      return null;
    }
    return (await this._api.conversation(latest.id)).result ?? null;
  }

  /**
   * Create the conversation on its first message, then send the message.
   */
  private async _sendMessage(
    text: string,
    attachment: ContextModel.IAttachment | null,
    references: readonly ContextModel.IReference[] = []
  ): Promise<Outcome<Response>> {
    if (!this._conversation) {
      let created = await this._api.createConversation(this._settings);
      const fallback = created.error && this._serverDefaults(created.error);
      if (fallback) {
        // A preference the server's policy does not allow gives way to the
        // server's default; a choice the person made is never replaced.
        created = await this._api.createConversation(fallback);
        if (!created.error) {
          this._settings = fallback;
          this._setNotice(ChatTexts.preferenceRefused(this._trans));
        }
      }
      if (created.error) {
        return { error: created.error };
      }
      this._conversation ??= created.result;
    }
    this._abort = new AbortController();
    const body: IMessageBody = { text, pageId: this._pageId, attachment };
    if (references.length > 0) {
      body.references = references.map(wireReference);
    }
    return this._api.sendMessage(
      this._conversation.id,
      body,
      this._abort.signal
    );
  }

  /**
   * Apply one stream event to a turn.
   */
  private _apply(index: number, event: StreamEvent): void {
    this._replace(index, applyEvent(this._turns[index], event));
    const c = this._conversation;
    if (event.type === 'turn' && c) {
      this._conversation = {
        ...c,
        toolsAttached: event.toolsAttached,
        state: 'running'
      };
      this._changed.emit();
    }
  }

  /**
   * Follow a running turn on the server until it ends; give it up as lost
   * when the server stays out of reach.
   */
  private async _follow(index: number): Promise<void> {
    const c = this._conversation;
    if (!c) {
      return;
    }
    const gen = this._generation;
    const current = () => gen === this._generation;
    const followed = await followTurn({
      api: this._api,
      conversationId: c.id,
      turnId: this._turns[index].turnId,
      isCurrent: current,
      onUpdate: (conversation, turn) => {
        this._adopt(conversation, c.id);
        if (turn) {
          this._replace(index, turn);
        }
      }
    });
    if (!followed && current()) {
      this._replace(
        index,
        abandonTurn(this._turns[index], ChatTexts.lost(this._trans))
      );
    }
  }

  /**
   * The settings with the server's defaults in place of the preferences,
   * when the server refused a conversation for its policy (`not-permitted`)
   * and a preference set the agent or the mode; else `null`.
   */
  private _serverDefaults(error: IRefusal): IConversationSettings | null {
    const catalog = this._catalog;
    if (error.code !== 'not-permitted' || !catalog) {
      return null;
    }
    const next = this._unchosen(initialSettings(catalog));
    const s = this._settings;
    return next.agentId !== s.agentId || next.mode !== s.mode ? next : null;
  }

  /**
   * Follow changed preferences while the next conversation is not created.
   */
  private _onPreferences(): void {
    if (!this._conversation && this._turns.length === 0 && this._catalog) {
      this._applyPreferences();
      this._setNotice(this._preferenceProblem());
    }
  }

  /**
   * Why the person's default agent (Settings Editor) is not used: it names
   * no agent this server offers; "" when it is empty or offered.
   */
  private _preferenceProblem(): string {
    const wanted = this._preferences?.values.defaultAgent ?? '';
    const catalog = this._catalog;
    if (!wanted || !catalog || catalog.agents.some(a => a.id === wanted)) {
      return '';
    }
    const used = catalog.agents.find(a => a.id === this._settings.agentId);
    return ChatTexts.unknownAgent(wanted, used?.label ?? '', this._trans);
  }

  /**
   * Set what the person did not choose to what the preferences say.
   */
  private _applyPreferences(): void {
    if (!this._catalog) {
      return;
    }
    this._settings = this._unchosen(
      initialSettings(this._catalog, this._preferences?.values)
    );
  }

  /**
   * The settings with the agent and the mode of `other` where the person
   * did not choose them.
   */
  private _unchosen(other: IConversationSettings): IConversationSettings {
    const s = this._settings;
    return {
      ...s,
      agentId: this._chosen.has('agentId') ? s.agentId : other.agentId,
      mode: this._chosen.has('mode') ? s.mode : other.mode
    };
  }

  private _replace(index: number, turn: ITurn): void {
    const turns = [...this._turns];
    turns[index] = turn;
    this._turns = turns;
    this._turnChanged.emit(index);
  }

  /**
   * Take the server's word on the conversation and its settings, unless
   * the model moved on to another conversation meanwhile.
   */
  private _adopt(c: IConversation, expectedId: string | null): void {
    if (expectedId !== null && this._conversation?.id !== expectedId) {
      return;
    }
    this._conversation = c;
    const { agentId, chatOnly, contextRefs, mode } = c;
    this._settings = { agentId, chatOnly, contextRefs: [...contextRefs], mode };
    this._changed.emit();
  }

  private _setNotice(text: string): void {
    this._notice = text;
    this._changed.emit();
  }

  private _api: CopilotApi;
  private _pageId: string;
  private _context: ContextModel;
  private _cellLabel: (a: ContextModel.IAttachment) => string;
  private _trans: TranslationBundle;
  private _preferences: Preferences | null;
  /** The settings the person changed; preferences never override them. */
  private _chosen = new Set<keyof IConversationSettings>();
  private _catalog: IAgentsInfo | null = null;
  private _loading: Promise<void> | null = null;
  private _settings: IConversationSettings = NO_SETTINGS;
  private _conversation: IConversation | null = null;
  private _turns: ITurn[] = [];
  private _running = false;
  private _notice = '';
  private _abort: AbortController | null = null;
  /** Bumped when the conversation is left, so that its late answers are dropped. */
  private _generation = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _turnChanged = new Signal<this, number>(this);
}

/**
 * The types of the chat model.
 */
export namespace ChatModel {
  /**
   * The options of a chat model.
   */
  export interface IOptions {
    /** The id of this page, sent with each message. */
    pageId: string;
    /** The context model whose attached cell goes with a message. */
    context: ContextModel;
    /** The name of an attached cell as the message shows it, e.g. "Code cell 3". */
    cellLabel: (attachment: ContextModel.IAttachment) => string;
    /** The client of the server's API. */
    api: CopilotApi;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
    /** The person's preferred agent and mode for a new conversation. */
    preferences?: Preferences | null;
  }
}
