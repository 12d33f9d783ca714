/**
 * The messages between the gateway and its agent spawner, over the spawner's IPC channel. The
 * gateway asks (`spawn`); the spawner answers each start with `spawned` (then one `stdio`
 * message per pipe, the pipe's handle attached) or `error`, and each end with `exit`. Messages
 * of one child arrive in that order (Node's IPC queues what follows a handle until it is taken).
 */
import type { SpawnOptions } from "../spawned-child.js";

export interface SpawnRequest extends SpawnOptions {
  type: "spawn";
  id: number;
  command: readonly string[];
}

export type StdioName = "stdin" | "stdout" | "stderr";

export type SpawnerReport =
  | { type: "ready" }
  | { type: "spawned"; id: number; pid: number }
  | { type: "stdio"; id: number; stream: StdioName }
  | { type: "exit"; id: number; code: number | null; signal: string | null }
  | { type: "error"; id: number; message: string; code: string | undefined };
