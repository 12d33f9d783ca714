/** `running`, then `completed` (exit 0) or `failed` (anything else, a timeout included). */
export type TaskStatus = "running" | "completed" | "failed";

/** A background bash task as the manager tracks it. */
export interface BackgroundTask {
  /** `bg_0001`, `bg_0002`, ... */
  id: string;
  command: string;
  toolUseId: string;
  status: TaskStatus;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Bounded: head and tail of what the command printed. */
  output: string;
  startedAt: number;
  endedAt: number | null;
  /** True once its notification has been handed to the model. */
  delivered: boolean;
}
