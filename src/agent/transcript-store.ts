import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Message } from "../model/types.js";
import type { CompactionBoundary } from "./compaction-boundary.js";
import { repairHistory } from "./history-repair.js";
import type { ToolKill } from "./running-tools.js";

export { repairHistory };

/**
 * Session transcripts as JSONL files, one per session:
 * `<RUDDER_HOME or ~/.rudder>/sessions/<session id>.jsonl`.
 *
 * The first line is a header `{"type":"session","session_id","cwd","created_at"}`; every
 * further line is `{"index": n, "message": {...}}`, and a later line with the same index
 * replaces an earlier one (the last user message grows in place when steering text joins
 * it). Lines are appended synchronously as the history changes, so a killed process loses
 * at most the message in flight; a torn last line is skipped when reading.
 *
 * A compaction appends `{"type":"compact_boundary", trigger, preTokens, postTokens, at, ...}`
 * and the compacted history after it, indexed from 0 again: the file keeps the whole
 * conversation, and what follows its last boundary is what a resumed session carries on.
 *
 * When rudder's exit kills the process trees of tools still running, it appends
 * `{"type":"tools_killed","tool_use_ids":[...],"at","cause"}`, so a resumed session tells the
 * model when those tools were killed rather than that their results are unknown.
 */

const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function sessionsDirectory(env: NodeJS.ProcessEnv): string {
  const home = env.RUDDER_HOME?.trim() || join(env.HOME?.trim() || homedir(), ".rudder");
  return join(home, "sessions");
}

export function isValidSessionId(id: string): boolean {
  return SESSION_ID_PATTERN.test(id);
}

export interface TranscriptHeader {
  type: "session";
  session_id: string;
  cwd: string;
  created_at: string;
}

/** The messages between two compaction boundaries, and the boundary that opened them. */
export interface TranscriptSegment {
  boundary?: CompactionBoundary;
  messages: Message[];
}

export interface Transcript {
  header?: TranscriptHeader;
  /** What follows the last boundary: the conversation as it is now. */
  history: Message[];
  /** Every part of the conversation, oldest first (one without compactions). */
  segments: TranscriptSegment[];
  /** Tools killed by rudder's exit before their results were recorded, oldest first. */
  kills: ToolKill[];
}

function messagesOf(byIndex: Map<number, Message>): Message[] {
  const history: Message[] = [];
  for (let index = 0; byIndex.has(index); index++) history.push(byIndex.get(index) as Message);
  return history;
}

/** The history a transcript file records, later lines winning; throws when unreadable. */
export function readTranscript(path: string): Transcript {
  let byIndex = new Map<number, Message>();
  const segments: TranscriptSegment[] = [];
  let boundary: CompactionBoundary | undefined;
  let header: TranscriptHeader | undefined;
  const kills: ToolKill[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry !== "object" || entry === null) continue;
    const record = entry as { type?: unknown; index?: unknown; message?: unknown };
    if (record.type === "session") {
      header ??= entry as TranscriptHeader;
      continue;
    }
    if (record.type === "tools_killed") {
      const kill = toolKill(entry);
      if (kill !== undefined) kills.push(kill);
      continue;
    }
    if (record.type === "compact_boundary") {
      segments.push({
        ...(boundary === undefined ? {} : { boundary }),
        messages: messagesOf(byIndex),
      });
      const { type: _type, ...fields } = entry as CompactionBoundary & { type: string };
      boundary = { ...fields, userTexts: Array.isArray(fields.userTexts) ? fields.userTexts : [] };
      byIndex = new Map();
      continue;
    }
    if (
      typeof record.index === "number" &&
      Number.isInteger(record.index) &&
      isMessage(record.message)
    ) {
      byIndex.set(record.index, record.message);
    }
  }
  const history = messagesOf(byIndex);
  segments.push({ ...(boundary === undefined ? {} : { boundary }), messages: history });
  return header === undefined ? { history, segments, kills } : { header, history, segments, kills };
}

function toolKill(entry: object): ToolKill | undefined {
  const { tool_use_ids: ids, at, cause } = entry as Record<string, unknown>;
  if (!Array.isArray(ids) || typeof at !== "string" || typeof cause !== "string") return undefined;
  const toolUseIds = ids.filter((id): id is string => typeof id === "string");
  return { toolUseIds, at, cause };
}

function isMessage(value: unknown): value is Message {
  if (typeof value !== "object" || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  const isBlock = (block: unknown) =>
    typeof block === "object" &&
    block !== null &&
    typeof (block as { type?: unknown }).type === "string";
  return (
    (role === "user" || role === "assistant") &&
    (typeof content === "string" || (Array.isArray(content) && content.every(isBlock)))
  );
}

/**
 * A digest of a message's JSON that tells whether it changed in place: its length and two
 * 32-bit FNV-1a sums (different offsets). Not node:crypto's SHA-1, whose module costs a
 * one-shot run several milliseconds to load; no one chooses what is compared here.
 */
function digest(json: string): string {
  let first = 0x811c9dc5;
  let second = 0x050c5d1f;
  for (let index = 0; index < json.length; index++) {
    const code = json.charCodeAt(index);
    first = Math.imul(first ^ code, 0x01000193);
    second = Math.imul(second ^ code, 0x01000193);
  }
  return `${json.length}:${(first >>> 0).toString(36)}:${(second >>> 0).toString(36)}`;
}

function endsWithNewline(path: string): boolean {
  const size = statSync(path).size;
  if (size === 0) return true;
  const descriptor = openSync(path, "r");
  try {
    const last = Buffer.alloc(1);
    readSync(descriptor, last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    closeSync(descriptor);
  }
}

export interface TranscriptFile {
  /** The file name without `.jsonl`; not necessarily a valid session id. */
  id: string;
  path: string;
  mtimeMs: number;
}

/** Reads and writes the transcripts of one sessions folder. */
export class TranscriptStore {
  readonly directory: string;

  constructor(directory: string) {
    this.directory = directory;
  }

  pathOf(sessionId: string): string {
    return join(this.directory, `${sessionId}.jsonl`);
  }

  exists(sessionId: string): boolean {
    return isValidSessionId(sessionId) && existsSync(this.pathOf(sessionId));
  }

  /**
   * The stored history, repaired for the API (`storedLength` counts the messages on disk;
   * give the writer `history.slice(0, storedLength)`); undefined when there is no such
   * session.
   */
  load(
    sessionId: string,
  ): { history: Message[]; storedLength: number; boundary?: CompactionBoundary } | undefined {
    if (!this.exists(sessionId)) return undefined;
    try {
      const transcript = readTranscript(this.pathOf(sessionId));
      const stored = transcript.history;
      const boundary = transcript.segments.at(-1)?.boundary;
      return {
        history: repairHistory(stored, statSync(this.pathOf(sessionId)).mtime, transcript.kills),
        storedLength: stored.length,
        ...(boundary === undefined ? {} : { boundary }),
      };
    } catch {
      return undefined;
    }
  }

  /**
   * The `.jsonl` files of the folder with their modification times, newest first (ties by
   * name); empty when the folder cannot be read. A file that vanishes meanwhile is left out.
   */
  files(): TranscriptFile[] {
    let names: string[];
    try {
      names = readdirSync(this.directory).filter((name) => name.endsWith(".jsonl"));
    } catch {
      return [];
    }
    return names
      .map((name) => {
        const path = join(this.directory, name);
        try {
          return { id: name.slice(0, -".jsonl".length), path, mtimeMs: statSync(path).mtimeMs };
        } catch {
          return undefined;
        }
      })
      .filter((entry) => entry !== undefined)
      .sort(
        (first, second) =>
          second.mtimeMs - first.mtimeMs ||
          (first.id < second.id ? -1 : first.id > second.id ? 1 : 0),
      );
  }

  /** The most recently written session started in `cwd`, if any. */
  latest(cwd: string): string | undefined {
    for (const candidate of this.files()) {
      try {
        if (readTranscript(candidate.path).header?.cwd === cwd) return candidate.id;
      } catch {
        // An unreadable transcript is not a candidate.
      }
    }
    return undefined;
  }

  /**
   * A writer for `onHistoryChange`: appends the messages that are new or changed since
   * the last call. `initial` is the history already on disk (for a resumed session).
   */
  writer(sessionId: string, cwd: string, initial: readonly Message[] = []): TranscriptWriter {
    return new TranscriptWriter(this, sessionId, cwd, initial);
  }
}

export class TranscriptWriter {
  readonly #path: string;
  /**
   * How many messages are on disk, and a digest of the last one's JSON: only the last can
   * change in place, and a digest instead of the JSON keeps no copy of the conversation here.
   */
  #written: { count: number; last: string | undefined };
  readonly #header: TranscriptHeader;
  readonly #directory: string;
  #ready: boolean;
  #tailChecked = false;

  constructor(store: TranscriptStore, sessionId: string, cwd: string, initial: readonly Message[]) {
    if (!isValidSessionId(sessionId)) throw new Error(`invalid session id: ${sessionId}`);
    this.#path = store.pathOf(sessionId);
    const last = initial.at(-1);
    this.#written = { count: initial.length, last: last && digest(JSON.stringify(last)) };
    this.#header = {
      type: "session",
      session_id: sessionId,
      cwd,
      created_at: new Date().toISOString(),
    };
    this.#ready = existsSync(this.#path);
    this.#directory = store.directory;
  }

  /**
   * Appends what changed. Only the last written message can change in place, so the
   * comparison starts there. Write failures are reported to `onError`, never thrown.
   */
  write(history: readonly Message[], onError?: (error: unknown) => void): void {
    try {
      if (this.#ready && !existsSync(this.#path)) this.#startOver();
      const lines: string[] = [];
      const { count, last } = this.#written;
      for (let index = Math.max(0, count - 1); index < history.length; index++) {
        const json = JSON.stringify(history[index]);
        const isLast = index === history.length - 1;
        const sum = isLast || index === count - 1 ? digest(json) : undefined;
        if (isLast) this.#written = { count: history.length, last: sum };
        if (index === count - 1 && sum === last) continue;
        lines.push(`{"index":${index},"message":${json}}\n`);
      }
      if (lines.length === 0 && this.#ready) return;
      if (!this.#ready) {
        mkdirSync(this.#directory, { recursive: true });
        lines.unshift(`${JSON.stringify(this.#header)}\n`);
        this.#ready = true;
      } else if (!this.#tailChecked) {
        // A process killed mid-write leaves a torn line; start on a line of our own.
        this.#tailChecked = true;
        if (!endsWithNewline(this.#path)) lines.unshift("\n");
      }
      appendFileSync(this.#path, lines.join(""));
    } catch (error) {
      onError?.(error);
    }
  }

  /**
   * Records that rudder's exit is killing the process trees of the tools `kill` names. Sync (it
   * runs in an exit handler); failures go to `onError`, never thrown.
   */
  writeKill(kill: ToolKill, onError?: (error: unknown) => void): void {
    try {
      if (!this.#ready) return;
      const { toolUseIds, at, cause } = kill;
      const line = { type: "tools_killed", tool_use_ids: toolUseIds, at, cause };
      appendFileSync(this.#path, `${JSON.stringify(line)}\n`);
    } catch (error) {
      onError?.(error);
    }
  }

  /**
   * Records a compaction: the boundary line, then `history` (the compacted conversation)
   * from index 0. Failures go to `onError`, never thrown.
   */
  writeBoundary(
    boundary: CompactionBoundary,
    history: readonly Message[],
    onError?: (error: unknown) => void,
  ): void {
    try {
      if (!this.#ready) this.write([], onError);
      if (!this.#ready) return;
      appendFileSync(this.#path, `${JSON.stringify({ type: "compact_boundary", ...boundary })}\n`);
      this.#written = { count: 0, last: undefined };
      this.write(history, onError);
    } catch (error) {
      onError?.(error);
    }
  }

  /**
   * The file was removed under a running session (`rudder sessions rm` or `prune`): the next
   * write stores the whole conversation again, header first, rather than a headless tail.
   */
  #startOver(): void {
    this.#written = { count: 0, last: undefined };
    this.#ready = false;
    this.#tailChecked = false;
  }
}
