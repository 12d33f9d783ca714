import { randomUUID } from "node:crypto";
import type pg from "pg";
import { type ScheduleChange, scheduleColumns } from "../rows.js";
import type { NewSchedule, ScheduleRecord } from "../store.js";
import { type ScheduleRow, toSchedule } from "./postgres-rows.js";
import { preparedQuery } from "./prepared-query.js";

/** The PostgreSQL store's schedules table. */
export class PostgresSchedules {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async #rows(text: string, values: unknown[] = []): Promise<ScheduleRow[]> {
    return (await this.#pool.query<ScheduleRow>(preparedQuery(text, values))).rows;
  }

  /**
   * Claims the firing due at `dueAt` for this worker, moving the schedule on to `nextRunAt`:
   * true for the one worker whose statement moved it. Records carry milliseconds; half a second
   * of slack, as the cron fires on each worker's clock.
   */
  async claimFiring(
    scheduleId: string,
    dueAt: string,
    nextRunAt: string | null,
    now: Date,
  ): Promise<boolean> {
    const result = await this.#pool.query(
      `UPDATE schedules SET last_run_at = $4, next_run_at = $3
       WHERE id = $1 AND date_trunc('milliseconds', next_run_at) = $2
         AND next_run_at <= $4::timestamptz + interval '500 ms'`,
      [scheduleId, dueAt, nextRunAt, now],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async list(): Promise<ScheduleRecord[]> {
    const rows = await this.#rows("SELECT * FROM schedules ORDER BY created_at, id");
    return rows.map(toSchedule);
  }

  async get(scheduleId: string): Promise<ScheduleRecord | null> {
    const [row] = await this.#rows("SELECT * FROM schedules WHERE id = $1", [scheduleId]);
    return row ? toSchedule(row) : null;
  }

  async insert(schedule: NewSchedule, nextRunAt: string | null): Promise<ScheduleRecord> {
    const [row] = await this.#rows(
      `INSERT INTO schedules (id, cron, channel_id, prompt, next_run_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [randomUUID(), schedule.cron, schedule.channelId, schedule.prompt, nextRunAt, new Date()],
    );
    return toSchedule(row!);
  }

  async delete(scheduleId: string): Promise<boolean> {
    const result = await this.#pool.query("DELETE FROM schedules WHERE id = $1", [scheduleId]);
    return (result.rowCount ?? 0) > 0;
  }

  async update(scheduleId: string, change: ScheduleChange): Promise<ScheduleRecord | null> {
    const entries = Object.entries(change).filter(([, value]) => value !== undefined);
    if (entries.length === 0) return this.get(scheduleId);
    const assignments = entries
      .map(
        ([key], index) => `${scheduleColumns[key as keyof typeof scheduleColumns]} = $${index + 1}`,
      )
      .join(", ");
    const [row] = await this.#rows(
      `UPDATE schedules SET ${assignments} WHERE id = $${entries.length + 1} RETURNING *`,
      [...entries.map(([, value]) => value), scheduleId],
    );
    return row ? toSchedule(row) : null;
  }
}
