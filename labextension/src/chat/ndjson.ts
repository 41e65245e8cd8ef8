// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

// Pure: no imports, so that Node runs the compiled module in the tests.

/**
 * Cuts a stream of text chunks into the lines of an NDJSON body.
 *
 * Chunks split anywhere, also inside a line or between `\r` and `\n`; a
 * line is handed out once its newline has arrived, and the last line, which
 * may lack one, by {@link flush}. Blank lines are dropped.
 */
export class NdjsonSplitter {
  /**
   * Add a chunk of decoded text.
   *
   * @returns The lines it completed, without their line endings.
   */
  push(chunk: string): string[] {
    this._rest += chunk;
    const parts = this._rest.split('\n');
    this._rest = parts.pop() ?? '';
    return Private.keep(parts);
  }

  /**
   * End the stream.
   *
   * @returns The last line when it had no newline, or nothing.
   */
  flush(): string[] {
    const last = this._rest;
    this._rest = '';
    return Private.keep([last]);
  }

  private _rest = '';
}

/**
 * Parse one NDJSON line; `null` for a line that is not a JSON object.
 */
export function parseLine(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? value
      : null;
  } catch {
    return null;
  }
}

namespace Private {
  /**
   * The lines without a trailing `\r`, blank ones dropped.
   */
  export function keep(lines: string[]): string[] {
    return lines
      .map(l => (l.endsWith('\r') ? l.slice(0, -1) : l))
      .filter(l => l.trim() !== '');
  }
}
