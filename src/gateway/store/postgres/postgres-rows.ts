import * as rows from "../rows.js";

/**
 * The PostgreSQL rows of the gateway's tables (see migrations.ts). node-postgres returns
 * `timestamptz` as a `Date`; records carry ISO strings, as the SQLite adapter's do.
 */
export type MessageRow = rows.MessageRow<Date>;
export type ChannelRow = rows.ChannelRow<Date>;
export type ScheduleRow = rows.ScheduleRow<Date, boolean>;

export const { toMessage, toChannel, toSchedule } = rows.rowMapping<Date, boolean>(
  (value) => value.toISOString(),
  (value) => value,
);
