import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { type ScheduleChange, scheduleColumns } from "../rows.js";
import type { NewSchedule, ScheduleRecord } from "../store.js";

export type { ScheduleChange };

import type { GroupCommit } from "./group-commit.js";
import { type ScheduleRow, toSchedule } from "./sqlite-rows.js";

/** The SQLite store's schedules table; its writes go through the store's `GroupCommit`. */
export class SqliteSchedules {
  readonly #database: Database.Database;
  readonly #commits: GroupCommit;

  constructor(database: Database.Database, commits: GroupCommit) {
    this.#database = database;
    this.#commits = commits;
  }

  async list(): Promise<ScheduleRecord[]> {
    const rows = this.#database
      .prepare("SELECT * FROM schedules ORDER BY created_at, id")
      .all() as ScheduleRow[];
    return rows.map(toSchedule);
  }

  async get(scheduleId: string): Promise<ScheduleRecord | null> {
    const row = this.#database.prepare("SELECT * FROM schedules WHERE id = ?").get(scheduleId) as
      | ScheduleRow
      | undefined;
    return row ? toSchedule(row) : null;
  }

  async insert(schedule: NewSchedule, nextRunAt: string | null): Promise<ScheduleRecord> {
    const id = randomUUID();
    await this.#commits.write(() =>
      this.#database
        .prepare(
          `INSERT INTO schedules (id, cron, channel_id, prompt, next_run_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          schedule.cron,
          schedule.channelId,
          schedule.prompt,
          nextRunAt,
          new Date().toISOString(),
        ),
    );
    return (await this.get(id))!;
  }

  async delete(scheduleId: string): Promise<boolean> {
    const deleted = await this.#commits.write(() =>
      this.#database.prepare("DELETE FROM schedules WHERE id = ?").run(scheduleId),
    );
    return deleted.changes > 0;
  }

  async update(scheduleId: string, change: ScheduleChange): Promise<ScheduleRecord | null> {
    const entries = Object.entries(change).filter(([, value]) => value !== undefined);
    if (entries.length > 0) {
      const assignments = entries
        .map(([key]) => `${scheduleColumns[key as keyof typeof scheduleColumns]} = ?`)
        .join(", ");
      const values = entries.map(([, value]) =>
        typeof value === "boolean" ? Number(value) : value,
      );
      await this.#commits.write(() =>
        this.#database
          .prepare(`UPDATE schedules SET ${assignments} WHERE id = ?`)
          .run(...values, scheduleId),
      );
    }
    return this.get(scheduleId);
  }
}
