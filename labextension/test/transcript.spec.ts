// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The chat's pure logic: NDJSON lines (chat/ndjson.ts) and the turn reducer
 * (chat/transcript.ts).
 */

import { NdjsonSplitter, parseLine } from '../src/chat/ndjson';
import {
  abandonTurn,
  applyEvent,
  endNotice,
  IUserMessage,
  parseEvent,
  parseTurn,
  shortError,
  startTurn,
  usageText
} from '../src/chat/transcript';
import { json } from './helpers';
import { english } from './translation';

function split(chunks: string[]): { lines: string[]; parsed: unknown[] } {
  const s = new NdjsonSplitter();
  const lines: string[] = [];
  for (const c of chunks) {
    lines.push(...s.push(c));
  }
  lines.push(...s.flush());
  return { lines, parsed: json(lines.map(parseLine)) };
}

function reduce(user: IUserMessage, chunks: string[]) {
  let turn = startTurn(user);
  const seen: string[] = [];
  const s = new NdjsonSplitter();
  for (const chunk of chunks) {
    for (const line of s.push(chunk)) {
      const event = parseEvent(parseLine(line));
      if (event) {
        turn = applyEvent(turn, event);
        seen.push(event.type);
      }
    }
  }
  return json({ turn, seen, notice: endNotice(turn, english) });
}

function lines(...events: Record<string, unknown>[]): string {
  return events.map(e => JSON.stringify(e) + '\n').join('');
}

/**
 * The text cut in two at every position, and cut into single characters.
 */
function everySplit(text: string): string[][] {
  const cuts = [...Array(text.length + 1).keys()].map(i => [
    text.slice(0, i),
    text.slice(i)
  ]);
  return [...cuts, [...text]];
}

const fresh = () => startTurn({ text: 'x', attachment: null });
const ended = (r: string) => ({
  ...fresh(),
  stopReason: r,
  error: r === 'error' ? 'boom' : null
});
const hi: IUserMessage = { text: 'hi', attachment: null };

describe('NDJSON lines', () => {
  it('come out whole wherever the chunks split', () => {
    const body =
      '{"type":"text","text":"a\\nb"}\r\n\n{"type":"end"}\n{"type":"text","text":"é"}';
    const results = everySplit(body).map(split);
    const expected = [
      '{"type":"text","text":"a\\nb"}',
      '{"type":"end"}',
      '{"type":"text","text":"é"}'
    ];
    for (const r of results) {
      expect(r.lines).toEqual(expected);
    }
    expect(results[0].parsed).toEqual([
      { type: 'text', text: 'a\nb' },
      { type: 'end' },
      { type: 'text', text: 'é' }
    ]);
  });

  it('parse as null when they are not JSON objects', () => {
    const result = split(['not json\n[1,2]\n"s"\n{"type":"turn"}\n']);
    expect(result.parsed).toEqual([null, null, null, { type: 'turn' }]);
  });
});

describe('the turn reducer', () => {
  it('collects text and tool calls in order', () => {
    const body = lines(
      { type: 'turn', turnId: 't1', toolsAttached: true },
      { type: 'text', text: 'Let me ' },
      {
        type: 'tool',
        toolCallId: 'c1',
        title: 'Read the selected cell',
        status: 'in_progress'
      },
      { type: 'text', text: 'look.' },
      { type: 'tool', toolCallId: 'c1', status: 'completed' },
      {
        type: 'tool',
        toolCallId: 'c2',
        title: 'Edit cell',
        status: 'pending',
        kind: 'edit',
        cellId: 'abc'
      },
      {
        type: 'tool',
        toolCallId: 'c2',
        status: 'failed',
        error: 'stale-source: the cell changed'
      },
      // Anything but a string is no cell.
      { type: 'tool', toolCallId: 'c1', cellId: 7 },
      { type: 'unknown', x: 1 },
      { type: 'end', stopReason: 'end_turn', error: null }
    );
    const user = {
      text: 'Add a docstring',
      attachment: { cellId: 'abc', label: 'Cell 3' }
    };
    const splits = everySplit(body).filter((_, i) => i % 7 === 0);
    expect(splits.length).toBeGreaterThan(1);
    for (const chunks of splits) {
      const result = reduce(user, chunks);
      const turn = result.turn;
      expect(turn.turnId).toBe('t1');
      expect(turn.user).toEqual(user);
      expect(turn.reply).toBe('Let me look.');
      expect(turn.toolCalls).toEqual([
        {
          toolCallId: 'c1',
          title: 'Read the selected cell',
          status: 'completed',
          error: null
        },
        {
          toolCallId: 'c2',
          title: 'Edit cell',
          status: 'failed',
          error: 'stale-source: the cell changed',
          kind: 'edit',
          cellId: 'abc'
        }
      ]);
      expect(turn.stopReason).toBe('end_turn');
      expect(turn.error).toBeNull();
      expect(result.notice).toBeNull();
      expect(result.seen).not.toContain('unknown');
    }
  });

  it('says so when a turn ends with an error, and keeps the details', () => {
    const body = lines(
      { type: 'turn', turnId: 't2', toolsAttached: false },
      { type: 'text', text: 'Working' },
      { type: 'end', stopReason: 'error', error: 'The agent exited (code 1).' }
    );
    const result = reduce(hi, [body]);
    expect(result.turn.stopReason).toBe('error');
    expect(result.notice).toEqual({
      level: 'error',
      text: 'The agent exited (code 1).',
      details: ''
    });
  });

  it('says the agent stopped for an error without words or with many', () => {
    const long = 'Traceback:\n' + 'line\n'.repeat(50);
    const ends = [
      { type: 'end', stopReason: 'error' },
      { type: 'end', stopReason: 'error', error: long }
    ];
    const results = ends.map(e => reduce(hi, [lines(e)]));
    expect(results[0].notice.text).toContain('stopped unexpectedly');
    expect(results[1].notice.text).toBe('Traceback:');
    expect(results[1].notice.details).toBe(long.trim());
  });

  it('keeps a turn without its end running until abandoned', () => {
    const body = lines(
      { type: 'turn', turnId: 't3', toolsAttached: true },
      { type: 'text', text: 'a' }
    );
    const result = reduce(hi, [body]);
    expect(result.turn.stopReason).toBeNull();
    expect(result.notice).toBeNull();
    const abandoned = json([
      abandonTurn(fresh(), 'lost'),
      abandonTurn(ended('end_turn'), 'lost')
    ]);
    expect(abandoned.map((t: any) => t.stopReason)).toEqual([
      'error',
      'end_turn'
    ]);
    expect(abandoned[0].error).toBe('lost');
  });

  it.each([
    ['end_turn', null],
    ['cancelled', 'info'],
    ['max_tokens', 'info'],
    ['max_turn_requests', 'info'],
    ['refusal', 'info'],
    ['error', 'error'],
    ['other', 'info']
  ])('gives the stop reason %s its notice', (reason, level) => {
    const notice = json(endNotice(ended(reason), english));
    expect(notice && notice.level).toBe(level);
  });
});

describe('server turns', () => {
  it('are read defensively', () => {
    const turns: any[] = [
      {
        turnId: 't',
        user: { text: 'q', attachment: { cellId: 'c', label: 'Cell 2' } },
        reply: '**a**',
        toolCalls: [
          { toolCallId: 'x', title: 'T', status: 'completed', error: null },
          {
            toolCallId: 'y',
            title: 'E',
            status: 'failed',
            error: 'e',
            kind: 'edit',
            cellId: 'c'
          },
          { toolCallId: 'z', title: 'Z', status: 'x', error: null, cellId: {} },
          { no: 'id' }
        ],
        stopReason: 'end_turn',
        error: null
      },
      { user: null, toolCalls: 'nope' },
      null
    ];
    const parsed = json(turns.map(parseTurn));
    expect(parsed[0]).toEqual({
      ...turns[0],
      toolCalls: [
        turns[0].toolCalls[0],
        turns[0].toolCalls[1],
        { toolCallId: 'z', title: 'Z', status: 'x', error: null }
      ]
    });
    expect(parsed[1]).toEqual({
      turnId: null,
      user: { text: '', attachment: null },
      reply: '',
      toolCalls: [],
      stopReason: null,
      error: null
    });
    expect(parsed[2]).toBeNull();
  });
});

describe('shortError', () => {
  it('gives one line of at most 80 characters', () => {
    const short = ['short', 'first line\nsecond line', 'x'.repeat(200)].map(e =>
      shortError(e)
    );
    expect(short.slice(0, 2)).toEqual(['short', 'first line']);
    expect(short[2]).toHaveLength(80);
    expect(short[2].endsWith('…')).toBe(true);
  });
});

describe('usage', () => {
  const usage = {
    inputTokens: 10,
    outputTokens: 5,
    conversationInputTokens: 20,
    conversationOutputTokens: 10
  };

  it('keeps the tokens of a usage event on the turn and says them quietly', () => {
    const out = reduce(hi, [
      lines(
        { type: 'text', text: 'One.' },
        { type: 'usage', ...usage, contextUsed: 15, contextSize: 100 },
        { type: 'end', stopReason: 'end_turn', error: null }
      )
    ]);
    expect(out.seen).toEqual(['text', 'usage', 'end']);
    expect(out.turn.usage).toEqual(usage);
    expect(usageText(usage, english)).toBe(
      '10 in · 5 out tokens (conversation: 20 in · 10 out)'
    );
  });

  it('ignores a usage event whose counts are not whole numbers of at least zero', () => {
    for (const bad of [-1, 1.5, '10', null, Number.MAX_VALUE]) {
      expect(parseEvent({ type: 'usage', ...usage, inputTokens: bad })).toBe(
        null
      );
    }
  });

  it('reads the usage of a saved turn, and none from a turn without it', () => {
    const saved = { turnId: 't', user: { text: 'hi' }, reply: 'One.' };
    expect(parseTurn({ ...saved, usage })?.usage).toEqual(usage);
    expect(parseTurn(saved)).not.toHaveProperty('usage');
    expect(
      parseTurn({ ...saved, usage: { inputTokens: 1 } })
    ).not.toHaveProperty('usage');
  });
});
