/**
 * The calls of `GatewayStore` that both adapters hand on unchanged to their schedule and spend
 * tables (sqlite-schedules.ts and postgres-schedules.ts, sqlite-spend.ts and postgres-spend.ts),
 * written once: an adapter extends `DelegatingStore` and gives it its two tables.
 */
import type { ScheduleChange } from "./rows.js";
import type { GatewayStore, NewSchedule, ScheduleRecord, SpendEntry, SpendTotal } from "./store.js";

export interface ScheduleTable {
  list(): Promise<ScheduleRecord[]>;
  get(scheduleId: string): Promise<ScheduleRecord | null>;
  insert(schedule: NewSchedule, nextRunAt: string | null): Promise<ScheduleRecord>;
  delete(scheduleId: string): Promise<boolean>;
  update(scheduleId: string, change: ScheduleChange): Promise<ScheduleRecord | null>;
}

export interface SpendTable {
  since(since: string): Promise<SpendTotal[]>;
  put(entry: SpendEntry): Promise<void>;
  delete(entryId: string): Promise<void>;
}

type Delegated =
  | "spendSince"
  | "putSpend"
  | "deleteSpend"
  | "listSchedules"
  | "getSchedule"
  | "insertSchedule"
  | "deleteSchedule"
  | "updateSchedule";

export abstract class DelegatingStore implements Pick<GatewayStore, Delegated> {
  protected abstract readonly schedules: ScheduleTable;
  protected abstract readonly spend: SpendTable;

  spendSince(since: string): Promise<SpendTotal[]> {
    return this.spend.since(since);
  }

  putSpend(entry: SpendEntry): Promise<void> {
    return this.spend.put(entry);
  }

  deleteSpend(entryId: string): Promise<void> {
    return this.spend.delete(entryId);
  }

  listSchedules(): Promise<ScheduleRecord[]> {
    return this.schedules.list();
  }

  getSchedule(scheduleId: string): Promise<ScheduleRecord | null> {
    return this.schedules.get(scheduleId);
  }

  insertSchedule(schedule: NewSchedule, nextRunAt: string | null): Promise<ScheduleRecord> {
    return this.schedules.insert(schedule, nextRunAt);
  }

  deleteSchedule(scheduleId: string): Promise<boolean> {
    return this.schedules.delete(scheduleId);
  }

  updateSchedule(scheduleId: string, change: ScheduleChange): Promise<ScheduleRecord | null> {
    return this.schedules.update(scheduleId, change);
  }
}
