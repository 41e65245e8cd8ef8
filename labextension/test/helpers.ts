// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * A value as it would cross JSON to the server: `undefined` fields dropped.
 */
export function json(value: unknown): any {
  return JSON.parse(JSON.stringify(value));
}

/**
 * The number of UTF-8 bytes of a string.
 */
export function utf8(text: string): number {
  return new TextEncoder().encode(text).length;
}
