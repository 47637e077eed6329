/**
 * Child process of the crash tests: `node --import tsx move-child.ts <rollouts> [<step>]` moves the
 * invalid-judge rows of <rollouts> into its sidecar and, when <step> is given, SIGKILLs itself at
 * that step of the move (see MOVE_STEPS). Prints the result as JSON when it lives to the end.
 */
import { moveFlaggedRows, type MoveStep } from '../../activities/move-invalid-judge-rows.js';

const [rollouts, killAt] = process.argv.slice(2);
const result = await moveFlaggedRows(rollouts, (step: MoveStep) => {
  if (step === killAt) process.kill(process.pid, 'SIGKILL');
});
process.stdout.write(JSON.stringify(result) + '\n');
