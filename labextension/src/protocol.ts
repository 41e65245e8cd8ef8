// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The bridge protocol version of contract section 9.
 */
export const PROTOCOL = 1;

/**
 * An action failure with a contract code, reported to the server as
 * `ok: false`. Its message must never contain cell source.
 */
export class ActionError extends Error {
  /**
   * @param code - A refusal code of contract section 7.
   * @param message - Plain words for a person.
   */
  constructor(
    readonly code: string,
    message: string
  ) {
    super(message);
  }
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
    return typeof msg === 'object' && msg && typeof msg.type === 'string' ? msg : null;
  } catch {
    return null;
  }
}

/**
 * The fields of an `ok: false` result.
 */
export function failure(code: string, message: string): Record<string, unknown> {
  return { ok: false, error: { code, message } };
}

/**
 * How an approval request ended (`approval-ended.outcome`).
 */
export type ApprovalOutcome = 'allowed' | 'denied' | 'timeout' | 'dismissed' | 'stopped';

/**
 * What an approval request says of its proposal: metadata only, never source.
 */
export interface IApprovalDetails {
  artifactId?: string;
  cellId?: string;
  newSourceBytes?: number;
  /** The conversation of an agent's own permission request. */
  conversationId?: string;
  /** The agent's tool call that asks, in a permission request. */
  toolCallId?: string;
}

/**
 * One answer an agent offers to its own permission request
 * (`kind: "permission"`): ACP's `allow_once`, `allow_always`, `reject_once`
 * or `reject_always`.
 */
export interface IPermissionOption {
  optionId: string;
  name: string;
  kind: string;
}

/**
 * An approval request (contract section 8). `kind` is `edit` for a
 * `notebook_edit_cell` call and `permission` for an agent's own ACP
 * permission request, which alone carries `options`.
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
export function parseApprovalRequest(msg: Record<string, unknown>): IApprovalRequest | null {
  const r = msg.request as Record<string, unknown> | null | undefined;
  if (typeof r !== 'object' || !r || !Private.id(r.requestId) || !Private.id(r.toolName)) {
    return null;
  }
  const d = (typeof r.details === 'object' && r.details ? r.details : {}) as Record<
    string,
    unknown
  >;
  const details: IApprovalDetails = {};
  for (const key of ['artifactId', 'cellId', 'conversationId', 'toolCallId'] as const) {
    if (typeof d[key] === 'string') {
      details[key] = d[key] as string;
    }
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
      typeof msg.expiresInMs === 'number' && msg.expiresInMs >= 0 ? msg.expiresInMs : 0
  };
}

/**
 * Read an `approval-ended` message; `null` when it has no request id.
 */
export function parseApprovalEnded(msg: Record<string, unknown>): IApprovalEnded | null {
  if (!Private.id(msg.requestId)) {
    return null;
  }
  const outcome = typeof msg.outcome === 'string' ? msg.outcome : '';
  return { requestId: msg.requestId as string, outcome: outcome as ApprovalOutcome };
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
          typeof o === 'object' && o !== null && id(o.optionId) && typeof o.name === 'string'
      )
      .map(o => ({
        optionId: o.optionId as string,
        name: (o.name as string) || (o.optionId as string),
        kind: typeof o.kind === 'string' ? o.kind : ''
      }));
  }
}
