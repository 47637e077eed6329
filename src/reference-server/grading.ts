/** Result of grading one multiple-choice answer, as the mcqa resources server reports it. */
export interface McqaGrade {
  /** 1.0 when the extracted letter equals the expected one, else 0.0. */
  reward: number;
  /** The request's `expected_answer`, trimmed and upper-cased ("" when absent), like mcqa. */
  expected_answer: string;
  /** The upper-cased letter of the last `\boxed{X}`, or null when there is none. */
  extracted_answer: string | null;
}

const BOXED_LETTER = /\\boxed\{\s*([A-Za-z])\s*\}/g;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The assistant text of a Responses-API response: the `text` of every `output_text` content part
 * of every `message` output item, joined with "\n" (as mcqa does). Other items are ignored.
 */
export function responseOutputText(response: unknown): string {
  if (!isRecord(response) || !Array.isArray(response.output)) return '';
  const texts: string[] = [];
  for (const item of response.output) {
    if (!isRecord(item) || item.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (isRecord(part) && part.type === 'output_text' && typeof part.text === 'string') {
        texts.push(part.text);
      }
    }
  }
  return texts.join('\n');
}

/** The letter of the LAST `\boxed{X}` in `text` (spaces around X allowed), upper-cased, or null. */
export function extractBoxedLetter(text: string): string | null {
  let letter: string | null = null;
  for (const match of text.matchAll(BOXED_LETTER)) letter = match[1].toUpperCase();
  return letter;
}

/** Grades a `/verify` request mcqa-style: last boxed letter vs `expected_answer`, case-insensitive. */
export function gradeMcqa(response: unknown, expectedAnswer: unknown): McqaGrade {
  const expected = typeof expectedAnswer === 'string' ? expectedAnswer.trim().toUpperCase() : '';
  const extracted = extractBoxedLetter(responseOutputText(response));
  const correct = extracted !== null && expected !== '' && extracted === expected;
  return { reward: correct ? 1.0 : 0.0, expected_answer: expected, extracted_answer: extracted };
}
