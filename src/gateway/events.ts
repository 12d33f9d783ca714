import type { AgentEvent } from "../agent/events.js";
import type { ContextUsage } from "./agents/context-usage.js";

export type MessageState = "received" | "steered" | "answered" | "deferred" | "failed";

/**
 * How a message was routed: it started a turn, steered the one in flight, ran on a one-shot
 * process, waits for a rate limit (`deferred`), for a command to finish (`queued`) or for an
 * agent process to be free (`waiting`: the worker is at `--max-agents`), or was
 * itself a command (`/compact`, `/clear`). `forwarded`: stored, and the channel's owner
 * (another worker on the same database) woken. `stored`: stored while the gateway was stopping,
 * for the next start to route (on a shared database, the channel's next owner).
 */
export type Disposition =
  | "started"
  | "steered"
  | "one_shot"
  | "deferred"
  | "queued"
  | "waiting"
  | "command"
  | "forwarded"
  | "stored";

/** A stored message as the API returns it. */
export interface StoredMessage {
  id: string;
  channelId: string;
  role: "user" | "assistant" | "system";
  text: string;
  state: MessageState | null;
  /** For replies: the user message they answer (the first, when they answer several). */
  replyTo: string | null;
  /**
   * For a reply that answers several user messages at once (one result of the agent answered
   * them all): every one of them, in order, `replyTo` first. Absent when it answers one.
   */
  answers?: string[];
  /**
   * `reply`, `fallback`, `error`, or `user`; `compaction` and `reset` mark where the
   * agent's context was compacted or a new conversation began (the page's dividers).
   */
  kind: "user" | "reply" | "fallback" | "error" | "compaction" | "reset";
  createdAt: string;
  /**
   * Who sent a user message: `http` (the page or the API), `cli` (`rudder send`),
   * `schedule:<id>`, or a chat source's `<platform>:<user id>[:<name>]`.
   */
  source?: string;
  /** For a reply or error in `GET /api/channels/:id/messages`: what the page showed of its turn. */
  display?: TurnDisplay;
  /** For a reply or error: the files the agent sent in its turn (its `send_file` tool), in order. */
  files?: SentFile[];
  /**
   * For a user message: the files that came with it (a chat's photo or document, the page's
   * or the API's attachments), saved in the channel's workspace, in order. Absent when none.
   */
  attachments?: MessageAttachment[];
}

/**
 * A file that came with a user message, as the store keeps it: where the gateway saved it in
 * the channel's workspace, not its bytes. An `image` is shown to the model as an image (read
 * from the workspace each time the message is written to an agent); a `file` or `voice` note
 * is named to the agent in the message's text.
 */
export interface MessageAttachment {
  kind: "image" | "file" | "voice";
  /** Relative to the channel's workspace, POSIX separators (`inbox/photo.jpg`). */
  path: string;
  /** `image/png`, `application/pdf`, ... (`application/octet-stream` when unknown). */
  mediaType: string;
  /**
   * In bytes, as received. Absent only for an image of a message stored before rudder kept
   * attachments (its marker line read at the migration; the file's size was not known then).
   */
  size?: number;
}

/**
 * A file the agent sent to its conversation with its `send_file` tool, as the store keeps it
 * with the reply of that turn: where it is in the channel's workspace, not its bytes (a chat
 * source and the page read it from there; `GET /api/channels/:id/files/<path>`).
 */
export interface SentFile {
  /** Relative to the channel's workspace, POSIX separators (`out/report.pdf`). */
  path: string;
  /** The name people see (the path's last part). */
  name: string;
  /** `image/png`, `application/pdf`, ... (`application/octet-stream` when unknown). */
  mediaType: string;
  /** In bytes, when the agent sent it. */
  size: number;
  /** The agent's words for it, markdown, when it gave some. */
  caption?: string;
  /** The SHA-256 of its bytes when the agent sent it (hex). */
  sha256?: string;
  /** The name of its copy in the data folder's outbox, kept until it is sent or given up. */
  copy?: string;
}

/**
 * What the page shows of a turn, as the events it was drawn from: texts (each run of deltas
 * joined), tool calls and results, retries, task lines and the turn's end (duration, cost,
 * how it failed). The page draws a stored one exactly as it drew the live one.
 */
export interface TurnDisplay {
  events: AgentEvent[];
}

/** A tool call waiting for a person's decision (`GET /api/channels/:id/permissions`). */
export interface PermissionRequestInfo {
  id: string;
  channelId: string;
  /** As the agent names it, e.g. `bash` (rudder) or `Bash` (Claude Code). */
  toolName: string;
  input: Record<string, unknown>;
  /** Why the agent asks (the matching rule, the blocked path), when it says. */
  description: string | null;
  createdAt: string;
}

export type PermissionVerdict = "allow" | "deny";

/**
 * Who settled a permission request: a person, the timeout, its turn ending or its process
 * stopping (`turn_end`), or the gateway shutting down.
 */
export type PermissionResolver = "person" | "timeout" | "turn_end" | "shutdown";

/**
 * What a channel's Server-Sent Events stream carries: the agent's own event
 * union (mapped from the child's stream-json lines), plus the gateway's
 * routing events. Every event has the channel it belongs to.
 */
export type GatewayEvent = (
  | AgentEvent
  | { type: "message_received"; message: StoredMessage; disposition: Disposition }
  | { type: "message_state"; messageId: string; state: MessageState }
  | { type: "reply"; message: StoredMessage }
  | { type: "fallback"; message: StoredMessage; retryAt: string }
  | { type: "error"; message: StoredMessage }
  /** A divider: the context was compacted (`kind: "compaction"`) or reset (`kind: "reset"`). */
  | { type: "notice"; message: StoredMessage }
  /** How full the channel's context is after a turn or a command; null once reset. */
  | { type: "context_usage"; usage: ContextUsage | null }
  | { type: "permission_request"; request: PermissionRequestInfo }
  | {
      type: "permission_resolved";
      requestId: string;
      decision: PermissionVerdict;
      resolvedBy: PermissionResolver;
      /** The denial's message, as the agent receives it. */
      message?: string;
    }
  /**
   * Sent first on a stream whose replay misses events the gateway no longer keeps (its buffer
   * is bounded in bytes and count): those up to id `through` are gone from memory, and what they
   * said of stored messages is in `GET /api/channels/:id/messages`. `resumed`: the client gave a
   * `Last-Event-ID` (it had the events before the gap, so it should reload from the store).
   */
  | { type: "events_dropped"; through: number; resumed: boolean; reason: string }
) & { channelId: string };
