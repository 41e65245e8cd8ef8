// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { ClientCodes, IRefusal } from '../api';
import { REFUSAL_TEXT } from '../protocol';

/**
 * The words of the chat for what went wrong. They never name a model, a
 * runtime or a path.
 */
export namespace ChatTexts {
  /**
   * Said when a running reply's stream broke off and its outcome cannot be read.
   */
  export const LOST =
    'The connection to the Copilot server was lost before the reply ended.';

  /**
   * Why a request of the chat failed, for a person.
   *
   * @param error - The refusal the API call resolved to.
   */
  export function failure(error: IRefusal): string {
    switch (error.code) {
      case ClientCodes.UNREACHABLE:
        return 'The Copilot server cannot be reached. Try again.';
      case ClientCodes.BAD_REPLY:
        return 'Something went wrong. Try again.';
      case 'conversation-busy':
        return 'A reply is still running. Wait for it, or press Stop.';
      case 'stale-source':
        return 'The attached cell changed after it was attached. Attach it again and resend.';
      case 'cell-not-found':
        return 'The attached cell is gone. Attach another cell, or send without one.';
      case 'unknown-conversation':
        return 'This conversation no longer exists on the server. Start a new conversation.';
      case 'feature-disabled':
        return REFUSAL_TEXT['feature-disabled'];
      default:
        return error.message || 'The Copilot server refused the request.';
    }
  }
}
