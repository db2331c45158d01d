// PostgreSQL's connections over a run, for the fixed-rate table: how many any server opened and
// closed. Each is a backend forked or ended, which holds up the other connections' queries while
// it happens on a small machine (bench/results/README.md). No side effects on import.
import pg from 'pg';

/** Reads PostgreSQL's session counts on one connection of its own, opened by start(). */
export class SessionCounter {
  constructor(url) {
    this.client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    this.client.on('error', () => {});
  }

  /** Connects; false when PostgreSQL cannot be reached. */
  async start() {
    try {
      await this.client.connect();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * `opened`: sessions established so far to every database (pg_stat_database's `sessions`,
   * PostgreSQL 14 and later); `open`: client backends now. Null when either is unknown.
   */
  async read() {
    try {
      const { rows } = await this.client.query(
        `SELECT (SELECT sum(sessions) FROM pg_stat_database)::int8::text AS opened,
                (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int8::text AS open`,
      );
      return rows[0].opened === null ? null : { opened: Number(rows[0].opened), open: Number(rows[0].open) };
    } catch {
      return null;
    }
  }

  close() {
    return this.client.end().catch(() => {});
  }
}

/** Connections opened and closed between two readings; null when either is missing. */
export function sessionsSince(before, after) {
  if (!before || !after) return null;
  const opened = after.opened - before.opened;
  return { opened, closed: opened - (after.open - before.open) };
}
