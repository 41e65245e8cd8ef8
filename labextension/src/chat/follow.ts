// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { CopilotApi, IConversation } from '../api';
import { pollUntil } from '../polling';
import { ITurn, parseTurn } from './transcript';

/**
 * Read a conversation again every {@link followTurn.POLL_MS} until one of
 * its turns has ended: the way to the end of a reply whose stream broke off
 * (the turn keeps running on the server) or that was running when the page
 * loaded.
 *
 * @returns `true` once the turn has ended or following was called off;
 *   `false` after {@link followTurn.MAX_FAILURES} failed reads in a row.
 */
export function followTurn(options: followTurn.IOptions): Promise<boolean> {
  const { api, conversationId, turnId, isCurrent, onUpdate } = options;
  let failures = 0;
  const step = async (): Promise<boolean | undefined> => {
    if (!isCurrent()) {
      return true;
    }
    const reply = await api.conversation(conversationId);
    if (reply.error) {
      return ++failures < followTurn.MAX_FAILURES ? undefined : false;
    }
    if (!isCurrent()) {
      return true;
    }
    failures = 0;
    const { conversation, turns } = reply.result;
    const raw = turnId
      ? turns.find(t => (t as { turnId?: unknown } | null)?.turnId === turnId)
      : turns[turns.length - 1];
    const turn = parseTurn(raw);
    onUpdate(conversation, turn);
    if (!turn || turn.stopReason !== null || conversation.state !== 'running') {
      return true;
    }
    return undefined;
  };
  return pollUntil(step, { interval: followTurn.POLL_MS, waitFirst: true });
}

/**
 * The types and constants of {@link followTurn}.
 */
export namespace followTurn {
  /**
   * What to follow, and where the news goes.
   */
  export interface IOptions {
    api: CopilotApi;
    conversationId: string;
    /** The turn, or `null` for the conversation's last one. */
    turnId: string | null;
    /** Whether the caller still wants news; `false` ends the following. */
    isCurrent: () => boolean;
    /** Called with each reading; `turn` is `null` when it is not there. */
    onUpdate: (conversation: IConversation, turn: ITurn | null) => void;
  }

  /** How often the conversation is read, in milliseconds. */
  export const POLL_MS = 1000;

  /** How many failed reads in a row give the turn up. */
  export const MAX_FAILURES = 5;
}
