export { reverifyRun } from './reverify-run.js';
