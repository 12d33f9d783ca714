import type { AgentEvent } from "../agent/events.js";
import type { LocalCommand } from "../agent/local-command.js";
import {
  backgroundTasksChangedLine,
  compactBoundaryLine,
  compactingLine,
  compactResultLine,
  compactSummaryLine,
  conversationResetLine,
} from "./compaction-lines.js";
import type { OutputLine } from "./output-lines.js";

/** What the reporter needs of the front end at the moment of an event. */
export interface CompactionContext {
  sessionId: string;
  /** The local command the current turn runs, if it is one. */
  command: LocalCommand["name"] | undefined;
  /** The first user message uuid of the current turn. */
  userMessageUuid: string | undefined;
  /** The `system/init` line for the session as it is now. */
  init: () => OutputLine;
  /** Takes the new session id after `/clear`. */
  renamed: (sessionId: string) => void;
}

/**
 * Turns compaction and `/clear` events into Claude Code's lines, in its order: for `/compact`,
 * status compacting, its end, `system/init`, `compact_boundary`, the summary; for an auto
 * compaction the same without `init`; for `/clear`, `conversation_reset`,
 * `background_tasks_changed` and the new session's `system/init`.
 */
export class CompactionReporter {
  readonly #write: (line: OutputLine) => void;
  #droppedTokens = 0;
  #lastUuid: string | null = null;

  constructor(write: (line: OutputLine) => void) {
    this.#write = write;
  }

  /** Remembers the uuid of a message line, the boundary's `logical_parent_uuid`. */
  saw(line: OutputLine): void {
    if ((line.type === "assistant" || line.type === "user") && typeof line.uuid === "string") {
      this.#lastUuid = line.uuid;
    }
  }

  /** True when it handled the event. */
  onEvent(event: AgentEvent, context: CompactionContext): boolean {
    switch (event.type) {
      case "compaction_start":
        this.#write(compactingLine(context.sessionId, event.trigger));
        return true;
      case "compaction_end": {
        this.#write(compactResultLine(context.sessionId, event.error));
        if (event.error !== undefined) return true;
        if (context.command === "compact") this.#write(context.init());
        this.#droppedTokens += Math.max(0, event.preTokens - event.postTokens);
        this.#write(
          compactBoundaryLine(context.sessionId, event, this.#droppedTokens, this.#lastUuid),
        );
        this.#write(compactSummaryLine(context.sessionId, event.summary ?? ""));
        return true;
      }
      case "session_cleared":
        this.#write(conversationResetLine(event, context.userMessageUuid));
        this.#write(backgroundTasksChangedLine(event.previousSessionId));
        context.renamed(event.sessionId);
        this.#droppedTokens = 0;
        this.#lastUuid = null;
        this.#write(context.init());
        return true;
      default:
        return false;
    }
  }
}
