/** One numbered SQL file of a migrations folder, as the runner reads it. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
