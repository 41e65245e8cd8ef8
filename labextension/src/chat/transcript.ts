// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

// Pure: type imports only, so that Node runs the compiled module in the tests.

import type { TranslationBundle } from '@jupyterlab/translation';

/**
 * One tool call of a turn, as a one-line card shows it.
 */
export interface IToolCall {
  readonly toolCallId: string;
  readonly title: string;
  /** ACP's `pending`, `in_progress`, `completed` or `failed`. */
  readonly status: string;
  /** What went wrong, for a failed call; `null` otherwise. */
  readonly error: string | null;
  /** The end of a command's output, as the server capped it; absent when none. */
  readonly output?: string;
  /** ACP's tool kind, e.g. `execute` or `edit`; absent when not said. */
  readonly kind?: string;
  /**
   * The cell the call names, as its input gave it (`cellId`, or
   * `afterCellId` for a new cell); absent when it names none.
   */
  readonly cellId?: string;
}

/**
 * The tokens of one reply, as its agent reported them, and the
 * conversation's totals so far (summed by the server).
 */
export interface IUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly conversationInputTokens: number;
  readonly conversationOutputTokens: number;
}

/**
 * The person's message of a turn: the text as typed, and the attached
 * cell's name (never its source).
 */
export interface IUserMessage {
  readonly text: string;
  readonly attachment: {
    readonly cellId: string;
    readonly label: string;
  } | null;
}

/**
 * One turn of a conversation: a message and the agent's reply to it.
 */
export interface ITurn {
  /** The server's id, `null` until its `turn` event. */
  readonly turnId: string | null;
  readonly user: IUserMessage;
  /** The reply so far, in Markdown. */
  readonly reply: string;
  readonly toolCalls: readonly IToolCall[];
  /** `null` while the reply runs, then ACP's stop reason or `error`. */
  readonly stopReason: string | null;
  /** What happened when `stopReason` is `error`. */
  readonly error: string | null;
  /** Whether the agent had to start again, without the earlier messages. */
  readonly restarted?: boolean;
  /** The reply's tokens, when its agent reported them. */
  readonly usage?: IUsage;
  /**
   * What the server said about the agent during the turn, in order, e.g.
   * that plan mode refused its request to edit files; absent when nothing.
   */
  readonly notices?: readonly string[];
}

/**
 * One line of the `POST conversations/<id>/messages` stream.
 */
export type StreamEvent =
  | {
      type: 'turn';
      turnId: string;
      toolsAttached: boolean | null;
      restarted: boolean;
    }
  | { type: 'text'; text: string }
  | {
      type: 'tool';
      toolCallId: string;
      title: string | null;
      status: string | null;
      error: string | null;
      output: string | null;
      kind: string | null;
      cellId: string | null;
    }
  | { type: 'notice'; text: string }
  | { type: 'usage'; usage: IUsage }
  | { type: 'end'; stopReason: string; error: string | null };

/**
 * What a finished turn says under its reply, when anything.
 */
export interface INotice {
  /** `error` for a turn that failed; `info` otherwise. */
  readonly level: 'info' | 'error';
  readonly text: string;
  /** The server's own words, for a details expander; "" when none. */
  readonly details: string;
}

/**
 * The title the server gives a conversation: the start of its first message.
 */
export function conversationTitle(text: string): string {
  return text.trim().split('\n', 1)[0].slice(0, 80);
}

/**
 * A new running turn for a message.
 */
export function startTurn(user: IUserMessage): ITurn {
  return {
    turnId: null,
    user,
    reply: '',
    toolCalls: [],
    stopReason: null,
    error: null
  };
}

/**
 * Read a stream line's object as an event; `null` for anything else.
 */
export function parseEvent(
  raw: Record<string, unknown> | null
): StreamEvent | null {
  switch (raw?.type) {
    case 'turn':
      return typeof raw.turnId === 'string'
        ? {
            type: 'turn',
            turnId: raw.turnId,
            toolsAttached: Private.bool(raw.toolsAttached),
            restarted: raw.restarted === true
          }
        : null;
    case 'text':
      return typeof raw.text === 'string'
        ? { type: 'text', text: raw.text }
        : null;
    case 'tool':
      return typeof raw.toolCallId === 'string'
        ? {
            type: 'tool',
            toolCallId: raw.toolCallId,
            title: Private.str(raw.title),
            status: Private.str(raw.status),
            error: Private.str(raw.error),
            output: Private.str(raw.output),
            kind: Private.str(raw.kind),
            cellId: Private.str(raw.cellId)
          }
        : null;
    case 'notice':
      return typeof raw.text === 'string' && raw.text.trim()
        ? { type: 'notice', text: raw.text }
        : null;
    case 'usage': {
      const usage = Private.usage(raw);
      return usage ? { type: 'usage', usage } : null;
    }
    case 'end':
      return {
        type: 'end',
        stopReason: Private.str(raw.stopReason) ?? 'end_turn',
        error: Private.str(raw.error)
      };
    default:
      return null;
  }
}

/**
 * The turn after one event; the turn itself is never changed.
 */
export function applyEvent(turn: ITurn, event: StreamEvent): ITurn {
  switch (event.type) {
    case 'turn':
      return event.restarted
        ? { ...turn, turnId: event.turnId, restarted: true }
        : { ...turn, turnId: event.turnId };
    case 'text':
      return { ...turn, reply: turn.reply + event.text };
    case 'tool': {
      const calls = [...turn.toolCalls];
      const i = calls.findIndex(c => c.toolCallId === event.toolCallId);
      const old = i < 0 ? null : calls[i];
      const moved = !!event.status && event.status !== 'failed';
      const call: IToolCall = Private.withOptional(
        {
          toolCallId: event.toolCallId,
          title: event.title || old?.title || '',
          status: event.status ?? old?.status ?? 'pending',
          // A call that moved on from failing forgets its error.
          error: event.error ?? (moved ? null : (old?.error ?? null))
        },
        {
          output: event.output ?? old?.output,
          kind: event.kind ?? old?.kind,
          cellId: event.cellId ?? old?.cellId
        }
      );
      if (i < 0) {
        calls.push(call);
      } else {
        calls[i] = call;
      }
      return { ...turn, toolCalls: calls };
    }
    case 'notice':
      return { ...turn, notices: [...(turn.notices ?? []), event.text] };
    case 'usage':
      return { ...turn, usage: event.usage };
    case 'end':
      return { ...turn, stopReason: event.stopReason, error: event.error };
  }
}

/**
 * End a running turn whose stream broke off and whose outcome cannot be
 * read; a finished turn is returned as it is.
 */
export function abandonTurn(turn: ITurn, error: string): ITurn {
  return turn.stopReason === null
    ? { ...turn, stopReason: 'error', error }
    : turn;
}

/**
 * Read a turn of `GET conversations/<id>`; `null` when it is not one.
 */
export function parseTurn(raw: unknown): ITurn | null {
  if (typeof raw !== 'object' || raw === null) {
    return null;
  }
  const r = raw as Record<string, unknown>;
  const user = (typeof r.user === 'object' && r.user ? r.user : {}) as Record<
    string,
    unknown
  >;
  const a = (
    typeof user.attachment === 'object' && user.attachment
      ? user.attachment
      : null
  ) as Record<string, unknown> | null;
  const calls = Array.isArray(r.toolCalls) ? r.toolCalls : [];
  const notices = Array.isArray(r.notices)
    ? r.notices.filter(
        (n): n is string => typeof n === 'string' && n.trim() !== ''
      )
    : [];
  const turn: ITurn = {
    turnId: Private.str(r.turnId),
    user: {
      text: Private.str(user.text) ?? '',
      attachment:
        a && typeof a.cellId === 'string'
          ? { cellId: a.cellId, label: Private.str(a.label) ?? '' }
          : null
    },
    reply: Private.str(r.reply) ?? '',
    toolCalls: calls
      .filter(
        (c): c is Record<string, unknown> => typeof c?.toolCallId === 'string'
      )
      .map(c =>
        Private.withOptional(
          {
            toolCallId: c.toolCallId as string,
            title: Private.str(c.title) ?? '',
            status: Private.str(c.status) ?? 'pending',
            error: Private.str(c.error)
          },
          {
            output: Private.str(c.output),
            kind: Private.str(c.kind),
            cellId: Private.str(c.cellId)
          }
        )
      ),
    stopReason: Private.str(r.stopReason),
    error: Private.str(r.error)
  };
  const usage = Private.usage(r.usage);
  const withUsage = usage ? { ...turn, usage } : turn;
  return notices.length > 0 ? { ...withUsage, notices } : withUsage;
}

/**
 * The quiet line under a reply: its tokens, and the conversation's.
 *
 * @param trans - The words of the panel, in the person's language.
 */
export function usageText(usage: IUsage, trans: TranslationBundle): string {
  return trans.__(
    '%1 in · %2 out tokens (conversation: %3 in · %4 out)',
    usage.inputTokens,
    usage.outputTokens,
    usage.conversationInputTokens,
    usage.conversationOutputTokens
  );
}

/**
 * What to say under a finished turn; `null` for a reply that simply ended.
 *
 * @param trans - The words of the panel, in the person's language.
 */
export function endNotice(
  turn: ITurn,
  trans: TranslationBundle
): INotice | null {
  const error = (turn.error ?? '').trim();
  const info = (text: string): INotice => ({
    level: 'info',
    text,
    details: error
  });
  switch (turn.stopReason) {
    case null:
    case 'end_turn':
      return null;
    case 'cancelled':
      return info(trans.__('Stopped.'));
    case 'max_tokens':
      return info(
        trans.__('The reply was cut off: it reached its length limit.')
      );
    case 'max_turn_requests':
      return info(
        trans.__(
          'The agent stopped: it reached its limit of steps for one message.'
        )
      );
    case 'refusal':
      return info(trans.__('The agent declined to answer this message.'));
    case 'error': {
      // The server's own words come first; a long account goes in the details.
      const text = error
        ? shortError(error, Private.NOTICE_CHARS)
        : trans.__(
            'The agent stopped unexpectedly. You can send another message.'
          );
      return { level: 'error', text, details: text === error ? '' : error };
    }
    default:
      return info(trans.__('The reply ended early.'));
  }
}

/**
 * The first line of an error, cut to `max` characters with an ellipsis.
 */
export function shortError(text: string, max = 80): string {
  const line = text.trim().split('\n', 1)[0].trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

namespace Private {
  /** The most characters of a server's error shown before its details. */
  export const NOTICE_CHARS = 240;

  /**
   * A string, or `null`.
   */
  export function str(value: unknown): string | null {
    return typeof value === 'string' ? value : null;
  }

  /**
   * A tool call with its output, kind and cell, each only when there is
   * one, so that calls without them keep their old shape.
   */
  export function withOptional(
    call: IToolCall,
    optional: Record<'output' | 'kind' | 'cellId', string | null | undefined>
  ): IToolCall {
    const present = Object.entries(optional).filter(([, value]) => !!value);
    return { ...call, ...Object.fromEntries(present) };
  }

  /**
   * The token counts of a `usage` event or a saved turn; `null` unless
   * every count is a whole number of at least zero.
   */
  export function usage(raw: unknown): IUsage | null {
    if (typeof raw !== 'object' || raw === null) {
      return null;
    }
    const r = raw as Record<string, unknown>;
    const keys = [
      'inputTokens',
      'outputTokens',
      'conversationInputTokens',
      'conversationOutputTokens'
    ] as const;
    const counts = keys.map(k => r[k]);
    if (!counts.every(n => Number.isSafeInteger(n) && (n as number) >= 0)) {
      return null;
    }
    const [i, o, ci, co] = counts as number[];
    return {
      inputTokens: i,
      outputTokens: o,
      conversationInputTokens: ci,
      conversationOutputTokens: co
    };
  }

  /**
   * A boolean, or `null`.
   */
  export function bool(value: unknown): boolean | null {
    return typeof value === 'boolean' ? value : null;
  }
}
