/**
 * The run's static details in the Temporal UI (set at start, shown on the run's page beside its
 * summary `reverify <output>`): where its live counts are, since the summary cannot change.
 */
export function staticDetailsOf(output: string): string {
  return [
    `Re-verifies into \`${output}\`.`,
    'Live counts (rows answered, scored, failed, in flight): **Current details** on this page, updated at every change; ' +
      `or \`reverify status -o ${output}\` (the same numbers).`,
  ].join('\n\n');
}
