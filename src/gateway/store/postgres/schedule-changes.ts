import type pg from "pg";
import type { NotifyListener } from "./notify-listener.js";

/** The NOTIFY channel on which a worker says it created, changed or deleted a schedule. */
export const SCHEDULES_CHANNEL = "rudder_schedules";

/** Tells every worker (the sender too) that schedule `scheduleId` changed: read it again. */
export async function announceSchedule(pool: pg.Pool, scheduleId: string): Promise<void> {
  await pool.query("SELECT pg_notify($1, $2)", [SCHEDULES_CHANNEL, scheduleId]);
}

/**
 * Calls `onChange` with the id of each schedule any worker announces; `onReconnect` after the
 * listening connection was lost and made again (changes may have been missed: read them all).
 */
export function listenForSchedules(
  notices: NotifyListener,
  onChange: (scheduleId: string) => void,
  onReconnect: () => void,
): Promise<{ close(): Promise<void> }> {
  return notices.listen(SCHEDULES_CHANNEL, onChange, onReconnect);
}
