/**
 * The agent spawner: a small process `rudder serve` starts once (its first agent start) and
 * asks, over its IPC channel, to start each agent. Node's `spawn` holds the event loop of the
 * process that calls it until the child has exec'd (150-250 ms on a loaded 2-core machine), and
 * a gateway holding it took one new connection per agent started: here it holds only this loop.
 * Each child starts as the gateway would start it (`spawnDirect`: its own process group, the
 * parent-death signal or, when `owned`, a watcher of this process, whose pipe stays here, the
 * niceness asked); its three pipes go to the gateway whole (handles
 * passed over IPC, nothing read here, this process's copies closed once taken), so the data
 * path stays direct. It reports each start, pid and end (`spawner-messages.ts`).
 * When the gateway is gone (the channel disconnects, however it died) or on SIGTERM, it ends
 * every child's group (SIGTERM, then SIGKILL to the groups and their recorded descendants after
 * a grace period) and exits.
 */
import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { killRecorded, listDescendants, signal } from "../process-tree.js";
import { spawnDirect } from "../spawn-direct.js";
import type { SpawnerReport, SpawnRequest, StdioName } from "./spawner-messages.js";

/** SIGTERM-to-SIGKILL grace for the children left when the gateway is gone (the argument). */
const GRACE_MS = Number(process.argv[2] ?? 2000) || 2000;

const children = new Map<number, ChildProcess>();
let closing = false;
/** Called when the last child has exited. */
let onEmpty: (() => void) | undefined;

function report(message: SpawnerReport, handle?: Socket): void {
  if (!process.connected) return;
  process.send?.(message, handle, {}, () => {
    // A send that failed (the gateway gone) is seen as the channel's disconnect.
  });
}

/**
 * Stops Node reading a pipe this process only passes on. Node starts reading each child pipe it
 * makes; whatever it read before the handle was sent would be lost (a sent handle's reads are
 * dropped), so reading stops in the same turn as the spawn, before the event loop polls.
 */
function stopReading(stream: unknown): void {
  const handle = (stream as { _handle?: { readStop?: () => number; reading?: boolean } } | null)
    ?._handle;
  if (handle?.readStop === undefined) return;
  handle.reading = false;
  handle.readStop();
}

function start(request: SpawnRequest): void {
  const { id } = request;
  let child: ChildProcess;
  try {
    child = spawnDirect(request.command, request);
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    report({ type: "error", id, message: failure.message, code: failure.code });
    return;
  }
  const pid = child.pid;
  child.on("error", (error: NodeJS.ErrnoException) => {
    if (pid === undefined) report({ type: "error", id, message: error.message, code: error.code });
  });
  if (pid === undefined) return;
  stopReading(child.stdout);
  stopReading(child.stderr);
  children.set(id, child);
  report({ type: "spawned", id, pid });
  const pipes: Array<[StdioName, Socket | null]> = [
    ["stdin", child.stdin as Socket | null],
    ["stdout", child.stdout as Socket | null],
    ["stderr", child.stderr as Socket | null],
  ];
  for (const [stream, socket] of pipes) {
    socket?.on("error", () => {
      // The gateway owns the pipe now; this copy is closed once sent.
    });
    if (socket) report({ type: "stdio", id, stream }, socket);
  }
  child.on("exit", (code, exitSignal) => {
    children.delete(id);
    report({ type: "exit", id, code, signal: exitSignal });
    if (children.size === 0) onEmpty?.();
  });
}

async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  const live = [...children.values()].flatMap((child) =>
    child.pid === undefined ? [] : [child.pid],
  );
  if (live.length === 0) process.exit(0);
  const recorded = live.flatMap((pid) => listDescendants(pid));
  for (const pid of live) signal(-pid, "SIGTERM");
  await new Promise<void>((resolve) => {
    onEmpty = resolve;
    setTimeout(resolve, GRACE_MS);
  });
  const current = live.flatMap((pid) => listDescendants(pid));
  for (const pid of live) signal(-pid, "SIGKILL");
  killRecorded([...recorded, ...current]);
  process.exit(0);
}

process.on("message", (message: SpawnRequest) => {
  if (message?.type === "spawn" && !closing) start(message);
});
process.on("disconnect", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
// Ctrl-C in a terminal is the gateway's to handle; it ends this process by disconnecting.
process.on("SIGINT", () => {});
report({ type: "ready" });
