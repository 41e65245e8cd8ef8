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
