// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type {
  ApprovalDetails,
  ApprovalOption,
  FileReview,
  PageMessage,
  ServerMessage
} from './generated/bridge';
import type {
  ApprovalOutcome as ApprovalOutcomeName,
  FileReviewDecision,
  PageCode,
  RefusalCode
} from './generated/vocabulary';
import { REFUSAL_TEXT } from './generated/vocabulary.js';

/**
 * The bridge protocol version of docs/protocol.md section 9.
 *
 * The names and message shapes of this module come from the protocol's one
 * source, `jupyter_copilot/schemas` (docs/protocol.md): `src/generated/` is
 * written from it by `scripts/generate-protocol.mjs` when the extension is
 * built.
 */
export { PROTOCOL } from './generated/vocabulary.js';
export { REFUSAL_TEXT };
export type { PageCode, RefusalCode, PageMessage, ServerMessage };

/**
 * An action failure with a contract code, reported to the server as
 * `ok: false`. Its message must never contain cell source.
 */
export class ActionError extends Error {
  /**
   * @param code - One of the codes a page may answer with (`pageCodes`,
   *   docs/protocol.md section 9); the server turns any other into `page-error`.
   * @param message - Plain words for a person; the code's default text
   *   (vocabulary.json) when omitted.
   */
  constructor(
    readonly code: PageCode,
    message: string = REFUSAL_TEXT[code]
  ) {
    super(message);
  }
}

/**
 * `value` if it is one of `list` (a list of the vocabulary), else `undefined`.
 */
export function oneOf<T extends string>(
  list: readonly T[],
  value: string | undefined
): T | undefined {
  return list.find(item => item === value);
}

/**
 * Parse a server message; `null` for anything that is not a typed object.
 */
export function parseMessage(raw: unknown): Record<string, unknown> | null {
  if (typeof raw !== 'string') {
    return null;
  }
  try {
    const msg = JSON.parse(raw);
    return typeof msg === 'object' && msg && typeof msg.type === 'string'
      ? msg
      : null;
  } catch {
    return null;
  }
}

/**
 * The fields of an `ok: false` result.
 */
export function failure(
  code: PageCode,
  message: string
): { ok: false; error: { code: PageCode; message: string } } {
  return { ok: false, error: { code, message } };
}

/**
 * How an approval request ended (`approval-ended.outcome`, vocabulary
 * `approvalOutcomes`): `allowed`, `denied`, `timeout`, `dismissed`,
 * `stopped` or `aborted`.
 */
export type ApprovalOutcome = ApprovalOutcomeName;

/**
 * What an approval request says of its proposal: metadata only, never source.
 * `conversationId` and `toolCallId` name an agent's own permission request;
 * `command` is the exact command line a `shell` request would run,
 * `program` the absolute path of the program that runs, `folder` the
 * server-relative folder it runs in ("" for the server's root) and
 * `ignoredEnv` the names of the environment variables the agent asked for,
 * which are not used;
 * `expectedSourceHash` is the hash of the source a `run` request would run.
 */
export type IApprovalDetails = ApprovalDetails;

/**
 * One answer an agent offers to its own permission request
 * (`kind: "permission"`): ACP's `allow_once`, `allow_always`, `reject_once`
 * or `reject_always`.
 */
export type IPermissionOption = ApprovalOption;

/**
 * An approval request (docs/protocol.md section 8). `kind` is `edit` for a
 * `notebook_edit_cell` call, `run` for a `notebook_run_cell` call (always
 * asked, section 11.2), `shell` for a command an agent wants to run
 * (its `details` give the command and folder), and `permission` for an
 * agent's own ACP permission request, which alone carries `options`.
 */
export interface IApproval {
  requestId: string;
  toolName: string;
  kind: string;
  description: string;
  details: IApprovalDetails;
  /** The answers the agent offers; empty unless `kind` is `permission`. */
  options: IPermissionOption[];
}

/**
 * The server's `approval` message: a tool call waits for the person.
 */
export interface IApprovalRequest {
  request: IApproval;
  /** The notebook's path, for the person only (file name and cell position). */
  path: string;
  /** How long the server waits for a decision, in milliseconds; 0 when not said. */
  expiresInMs: number;
}

/**
 * The server's `approval-ended` message.
 */
export interface IApprovalEnded {
  requestId: string;
  /** An outcome this page does not know still ends the request. */
  outcome: ApprovalOutcome;
}

/**
 * Read an `approval` message; `null` when it has no request id or tool name.
 * Detail fields of the wrong type are dropped.
 */
export function parseApprovalRequest(
  msg: Record<string, unknown>
): IApprovalRequest | null {
  const r = msg.request as Record<string, unknown> | null | undefined;
  if (
    typeof r !== 'object' ||
    !r ||
    !Private.id(r.requestId) ||
    !Private.id(r.toolName)
  ) {
    return null;
  }
  const d = (
    typeof r.details === 'object' && r.details ? r.details : {}
  ) as Record<string, unknown>;
  const details: IApprovalDetails = {};
  const keys = [
    'artifactId',
    'cellId',
    'conversationId',
    'toolCallId',
    'command',
    'program',
    'folder',
    'expectedSourceHash'
  ] as const;
  for (const key of keys) {
    if (typeof d[key] === 'string') {
      details[key] = d[key] as string;
    }
  }
  if (
    Array.isArray(d.ignoredEnv) &&
    d.ignoredEnv.every(name => typeof name === 'string')
  ) {
    details.ignoredEnv = d.ignoredEnv as string[];
  }
  if (Number.isInteger(d.newSourceBytes) && (d.newSourceBytes as number) >= 0) {
    details.newSourceBytes = d.newSourceBytes as number;
  }
  return {
    request: {
      requestId: r.requestId as string,
      toolName: r.toolName as string,
      kind: typeof r.kind === 'string' ? r.kind : '',
      description: typeof r.description === 'string' ? r.description : '',
      details,
      options: Private.options(r.options)
    },
    path: typeof msg.path === 'string' ? msg.path : '',
    expiresInMs:
      typeof msg.expiresInMs === 'number' && msg.expiresInMs >= 0
        ? msg.expiresInMs
        : 0
  };
}

/**
 * Read an `approval-ended` message; `null` when it has no request id.
 */
export function parseApprovalEnded(
  msg: Record<string, unknown>
): IApprovalEnded | null {
  if (!Private.id(msg.requestId)) {
    return null;
  }
  const outcome = typeof msg.outcome === 'string' ? msg.outcome : '';
  return {
    requestId: msg.requestId as string,
    outcome: outcome as ApprovalOutcome
  };
}

/**
 * A proposal to write a file that is not a notebook (`file-review`).
 * Nothing is written until the person keeps it. `path` is the
 * server-relative API path (e.g. `data/notes.txt`), `original` the file's
 * current text (`null` when the file does not exist yet), `proposed` the
 * agent's text and `agentLabel` the agent's name ("" when not said).
 */
export type IFileReview = FileReview;

/**
 * How a file review ended (`file-review-ended.decision`, vocabulary
 * `fileReviewDecisions`): kept, undone, the file changed since the proposal
 * (`conflict`), or the conversation ended (`withdrawn`).
 */
export type FileReviewOutcome = FileReviewDecision;

/**
 * The server's `file-review-ended` message.
 */
export interface IFileReviewEnded {
  reviewId: string;
  /** A decision this page does not know still ends the review. */
  decision: FileReviewOutcome;
}

/**
 * Read a `file-review` message; `null` when its review has no id, path or
 * proposed text. An `original` that is not a string means a new file.
 */
export function parseFileReview(
  msg: Record<string, unknown>
): IFileReview | null {
  const r = msg.review as Record<string, unknown> | null | undefined;
  if (
    typeof r !== 'object' ||
    !r ||
    !Private.id(r.reviewId) ||
    !Private.id(r.path) ||
    typeof r.proposed !== 'string'
  ) {
    return null;
  }
  return {
    reviewId: r.reviewId,
    path: r.path,
    original: typeof r.original === 'string' ? r.original : null,
    proposed: r.proposed,
    agentLabel: typeof r.agentLabel === 'string' ? r.agentLabel : ''
  };
}

/**
 * Read a `file-review-ended` message; `null` when it has no review id.
 */
export function parseFileReviewEnded(
  msg: Record<string, unknown>
): IFileReviewEnded | null {
  if (!Private.id(msg.reviewId)) {
    return null;
  }
  const decision = typeof msg.decision === 'string' ? msg.decision : '';
  return { reviewId: msg.reviewId, decision: decision as FileReviewOutcome };
}

namespace Private {
  /**
   * Whether a value is a non-empty string.
   */
  export function id(value: unknown): value is string {
    return typeof value === 'string' && value.length > 0;
  }

  /**
   * The well-formed permission options of a request, in the agent's order.
   */
  export function options(value: unknown): IPermissionOption[] {
    if (!Array.isArray(value)) {
      return [];
    }
    return value
      .filter(
        (o): o is Record<string, unknown> =>
          typeof o === 'object' &&
          o !== null &&
          id(o.optionId) &&
          typeof o.name === 'string'
      )
      .map(o => ({
        optionId: o.optionId as string,
        name: (o.name as string) || (o.optionId as string),
        kind: typeof o.kind === 'string' ? o.kind : ''
      }));
  }
}
