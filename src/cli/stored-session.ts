import type { CompactionBoundary } from "../agent/compaction-boundary.js";
import { randomUUID } from "../agent/random-uuid.js";
import type { ToolKill } from "../agent/running-tools.js";
import { Session, type SessionOptions } from "../agent/session.js";
import { isValidSessionId, sessionsDirectory, TranscriptStore } from "../agent/transcript-store.js";
import type { Message } from "../model/types.js";
import type { AgentSetup } from "./agent-setup.js";
import { booleanFlag, type FlagSpecs, type ParsedArgs, stringFlag } from "./args.js";

/** The flags that pick a stored conversation, as Claude Code names them. */
export const SESSION_FLAGS: FlagSpecs = {
  resume: { type: "string", short: "r" },
  "session-id": { type: "string" },
  continue: { type: "boolean", short: "c" },
};

export interface StoredSession {
  sessionId: string;
  /** The conversation so far when resuming; undefined for a new one. */
  history: Message[] | undefined;
  /** The last compaction of a resumed conversation. */
  boundary: CompactionBoundary | undefined;
  /** Writes the history as the turn goes (give it to `Session.onHistoryChange`). */
  persist: (history: readonly Message[]) => void;
  /** Records a compaction (give it to `Session.onCompaction`). */
  persistBoundary: (boundary: CompactionBoundary, history: readonly Message[]) => void;
  /** `/clear`: later writes go to a new transcript under `sessionId` (`Session.onClear`). */
  restart: (sessionId: string) => void;
  /** Records tools killed by rudder's exit (give it to `Session.onToolsKilled`). */
  persistKill: (kill: ToolKill) => void;
}

/** The `Session` options that store a conversation as it goes. */
export function storedSessionOptions(
  stored: StoredSession,
): Pick<
  SessionOptions,
  | "sessionId"
  | "history"
  | "compactedUserTexts"
  | "onHistoryChange"
  | "onCompaction"
  | "onClear"
  | "onToolsKilled"
> {
  return {
    sessionId: stored.sessionId,
    onHistoryChange: stored.persist,
    onToolsKilled: stored.persistKill,
    onCompaction: stored.persistBoundary,
    onClear: stored.restart,
    ...(stored.history === undefined ? {} : { history: stored.history }),
    ...(stored.boundary === undefined ? {} : { compactedUserTexts: stored.boundary.userTexts }),
  };
}

/**
 * `--resume <id>`, `--continue` (this folder's latest), `--session-id <uuid>`
 * or a new id, with a transcript writer under `~/.rudder/sessions/` (or
 * `$RUDDER_HOME/sessions/`). An error text, in Claude Code's words, when the
 * conversation cannot be had. A failing transcript write is warned about
 * once and does not stop the session.
 */
export function openStoredSession(
  args: ParsedArgs,
  workspace: string,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): StoredSession | { error: string; sessionId: string } {
  const store = new TranscriptStore(sessionsDirectory(env));
  const resolved = resolveSession(args, store, workspace, warn);
  if ("error" in resolved) return resolved;
  let transcript = store.writer(resolved.sessionId, workspace, resolved.stored);
  let failed = false;
  const onError = (error: unknown): void => {
    if (failed) return;
    failed = true;
    warn(`cannot store the session transcript: ${String(error)}`);
  };
  return {
    sessionId: resolved.sessionId,
    history: resolved.history,
    boundary: resolved.boundary,
    persist: (history) => transcript.write(history, onError),
    persistBoundary: (boundary, history) => transcript.writeBoundary(boundary, history, onError),
    persistKill: (kill) => transcript.writeKill(kill, onError),
    restart: (sessionId) => {
      transcript = store.writer(sessionId, workspace);
      // Stored at once, empty: as after Claude Code's `/clear`, the new conversation is the
      // one `--continue` picks and `--resume` finds.
      transcript.write([], onError);
    },
  };
}

interface ResolvedSession {
  sessionId: string;
  history: Message[] | undefined;
  /** What is already on disk, for the transcript writer. */
  stored: Message[];
  boundary?: CompactionBoundary;
}

function resolveSession(
  args: ParsedArgs,
  store: TranscriptStore,
  workspace: string,
  warn: (message: string) => void,
): ResolvedSession | { error: string; sessionId: string } {
  const resume = stringFlag(args, "resume");
  const requested = stringFlag(args, "session-id");
  let id = resume;
  if (id === undefined && booleanFlag(args, "continue")) {
    id = store.latest(workspace);
    if (id === undefined) warn("no conversation to continue in this folder; starting a new one");
  }
  if (id !== undefined) {
    const loaded = store.load(id);
    if (loaded === undefined) {
      return { error: `No conversation found with session ID: ${id}`, sessionId: id };
    }
    return {
      sessionId: id,
      history: loaded.history,
      stored: loaded.history.slice(0, loaded.storedLength),
      ...(loaded.boundary === undefined ? {} : { boundary: loaded.boundary }),
    };
  }
  if (requested !== undefined) {
    if (!isValidSessionId(requested)) {
      return { error: `Invalid session ID: ${requested}`, sessionId: requested };
    }
    if (store.exists(requested)) {
      return { error: `Session ID ${requested} is already in use.`, sessionId: requested };
    }
    return { sessionId: requested, history: undefined, stored: [] };
  }
  return { sessionId: randomUUID(), history: undefined, stored: [] };
}

/**
 * The `Session` of `rudder run` and `rudder chat`: the stored conversation the flags pick (or a
 * new one), persisted as it goes. When there is none to be had, says so in one line, closes the
 * setup and gives undefined (the command exits 1).
 */
export async function storedSessionFromFlags(
  command: string,
  args: ParsedArgs,
  setup: AgentSetup,
  io: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
): Promise<Session | undefined> {
  const stored = openStoredSession(args, setup.workspace, io.env, (message) =>
    io.stderr.write(`rudder: ${message}\n`),
  );
  if ("error" in stored) {
    io.stderr.write(`rudder ${command}: ${stored.error}\n`);
    await setup.close();
    return undefined;
  }
  return new Session({ ...setup.options, ...storedSessionOptions(stored) });
}
