import { describe, expect, it } from 'vitest';
import { extractBoxedLetter, gradeMcqa, responseOutputText } from '../../src/reference-server/grading.js';

function message(...texts: string[]): Record<string, unknown> {
  return {
    type: 'message',
    role: 'assistant',
    content: texts.map((text) => ({ type: 'output_text', text, annotations: [] })),
  };
}

function response(...output: unknown[]): Record<string, unknown> {
  return { id: 'resp_1', object: 'response', output };
}

describe('responseOutputText', () => {
  it('joins the output_text parts of message items and skips everything else', () => {
    const reasoning = { type: 'reasoning', summary: [{ type: 'summary_text', text: '\\boxed{Z}' }] };
    const refusal = { type: 'message', content: [{ type: 'refusal', refusal: '\\boxed{Y}' }] };
    const text = responseOutputText(response(reasoning, message('one', 'two'), refusal, message('three')));
    expect(text).toBe('one\ntwo\nthree');
  });

  it('returns "" for a response without a usable output list', () => {
    expect(responseOutputText({})).toBe('');
    expect(responseOutputText({ output: 'text' })).toBe('');
    expect(responseOutputText(null)).toBe('');
  });
});

describe('extractBoxedLetter', () => {
  it('takes the LAST boxed letter', () => {
    expect(extractBoxedLetter('maybe \\boxed{A}... no, \\boxed{C}')).toBe('C');
  });

  it('allows spaces around the letter and upper-cases it', () => {
    expect(extractBoxedLetter('\\boxed{ b }')).toBe('B');
  });

  it('ignores boxes that do not hold exactly one letter', () => {
    expect(extractBoxedLetter('\\boxed{AB} \\boxed{42} \\boxed{}')).toBeNull();
    expect(extractBoxedLetter('\\boxed{B} then \\boxed{AB}')).toBe('B');
    expect(extractBoxedLetter('the answer is B')).toBeNull();
  });
});

describe('gradeMcqa', () => {
  it('rewards 1.0 for the expected letter, case-insensitively', () => {
    expect(gradeMcqa(response(message('so \\boxed{b}')), ' B ')).toEqual({
      reward: 1.0,
      expected_answer: 'B',
      extracted_answer: 'B',
    });
  });

  it('rewards 0.0 for another letter', () => {
    expect(gradeMcqa(response(message('\\boxed{A}')), 'B')).toEqual({
      reward: 0.0,
      expected_answer: 'B',
      extracted_answer: 'A',
    });
  });

  it('rewards 0.0 with a null extracted_answer when nothing is boxed', () => {
    expect(gradeMcqa(response(message('I think B')), 'B')).toEqual({
      reward: 0.0,
      expected_answer: 'B',
      extracted_answer: null,
    });
  });

  it('rewards 0.0 when expected_answer is missing', () => {
    expect(gradeMcqa(response(message('\\boxed{A}')), undefined)).toEqual({
      reward: 0.0,
      expected_answer: '',
      extracted_answer: 'A',
    });
  });

  it('takes the last boxed letter across several messages', () => {
    expect(gradeMcqa(response(message('\\boxed{D}'), message('final: \\boxed{A}')), 'A').reward).toBe(1.0);
  });
});
