/**
 * The run's output path as a search attribute, so a run is found by it in the Temporal UI and
 * `temporal workflow list` (`ReverifyOutput="/data/out.jsonl" AND ExecutionStatus="Running"`).
 * A custom attribute must be registered on the server first: the embedded dev server registers it
 * at start (`--search-attribute`); on another cluster an operator may (`temporal operator
 * search-attribute create --name ReverifyOutput --type Keyword`). A run sets it only when the server
 * has it; the memo (no registration needed) names the output in every case.
 */
import type { Client } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

export const OUTPUT_ATTRIBUTE = defineSearchAttributeKey('ReverifyOutput', SearchAttributeType.KEYWORD);

/** The dev server's flags that register it. */
export const DEV_SERVER_SEARCH_ATTRIBUTE_ARGS = ['--search-attribute', `${OUTPUT_ATTRIBUTE.name}=Keyword`];

/** Keyword values longer than this are refused by SQL visibility stores: such a path is not set. */
const KEYWORD_MAX_CHARS = 255;

/** The search attributes of a run writing `output`, or undefined when the server lacks the attribute. */
export async function outputSearchAttributes(client: Client, output: string): Promise<TypedSearchAttributes | undefined> {
  if (output.length > KEYWORD_MAX_CHARS) return undefined;
  const registered = await client.connection.operatorService
    .listSearchAttributes({ namespace: client.options.namespace })
    .then((r) => r.customAttributes?.[OUTPUT_ATTRIBUTE.name] !== undefined)
    .catch(() => false);
  return registered ? new TypedSearchAttributes([{ key: OUTPUT_ATTRIBUTE, value: output }]) : undefined;
}
