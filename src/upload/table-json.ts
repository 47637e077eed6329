/**
 * The `rollouts.json` table as MLflow's `log_table` writes it (pandas `to_json(orient="split",
 * index=False)`): `{"columns":["Rollout"],"data":[["<row JSON>"],...]}`, each string escaped as
 * pandas escapes it (`/` as `\/`, every non-ASCII character as `\uXXXX`). Written a row at a time.
 */

/** The table's one column, as NeMo Gym names it. */
export const ROLLOUT_COLUMN = 'Rollout';
/** The artifact NeMo Gym's MLflow exporter writes the rollouts to. */
export const ROLLOUTS_ARTIFACT = 'rollouts.json';

/** A JSON string literal as pandas' `to_json` writes it. */
export function pandasJsonString(s: string): string {
  return JSON.stringify(s).replace(/[/\u0080-\uffff]/g, (c) => (c === '/' ? '\\/' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** The text before the first row. */
export const TABLE_HEAD = `{"columns":[${pandasJsonString(ROLLOUT_COLUMN)}],"data":[`;
/** The text after the last row. */
export const TABLE_TAIL = ']}';

/** One row of the table (`index` from 0), with the comma that separates it from the one before. */
export function tableRow(rowJson: string, index: number): string {
  return `${index === 0 ? '' : ','}[${pandasJsonString(rowJson)}]`;
}
