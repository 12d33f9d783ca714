import * as rows from "../rows.js";

/** The SQLite rows of the gateway's tables (see migrations.ts): ISO strings and 0/1 flags. */
export type MessageRow = rows.MessageRow<string>;
export type ChannelRow = rows.ChannelRow<string>;
export type ScheduleRow = rows.ScheduleRow<string, number>;

export const { toMessage, toChannel, toSchedule } = rows.rowMapping<string, number>(
  (value) => value,
  (value) => value !== 0,
);
