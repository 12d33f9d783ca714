import type { AgentEvent, TurnOutcome } from "../../agent/events.js";
import {
  describeTaskEnd,
  describeToolCall,
  describeToolResult,
  formatTokens,
  oneLine,
  printable,
} from "./chat-format.js";
import type { ChatScreen } from "./chat-screen.js";
import { Spinner } from "./spinner.js";

export const IDLE_PROMPT = "> ";
export const QUESTION_PROMPT = "  Allow? [y/N] ";

function describeOutcome(outcome: TurnOutcome): string | undefined {
  if (!outcome.isError) return undefined;
  if (outcome.subtype === "aborted") return "  (interrupted)";
  return `  error (${outcome.subtype}): ${oneLine(outcome.result)}`;
}

/**
 * Turns the agent's events into terminal output: streamed text, one line per
 * tool call and one per outcome, background-task notices, and the live
 * line's prompt (a spinner with elapsed time while the model or a tool works,
 * `Allow? [y/N]` while a question waits, `> ` when idle).
 */
export class ChatRenderer {
  readonly #screen: ChatScreen;
  readonly #spinner: Spinner;
  /** Tool calls whose outcome was already shown another way (denied, backgrounded). */
  readonly #shownOutcome = new Set<string>();
  #busy = false;
  #question: string | undefined;
  #closed = false;

  constructor(screen: ChatScreen) {
    this.#screen = screen;
    this.#spinner = new Spinner(() => this.#updatePrompt());
    this.#updatePrompt();
  }

  get busy(): boolean {
    return this.#busy;
  }

  handle(event: AgentEvent): void {
    if (this.#closed) return;
    const screen = this.#screen;
    switch (event.type) {
      case "turn_start":
        this.#setBusy(true);
        break;
      case "model_start":
        this.#setBusy(true);
        this.#spin("thinking");
        break;
      case "text_delta":
        // The spinner keeps turning: it shows whenever the live line does.
        screen.stream(printable(event.text));
        break;
      case "model_retry":
        screen.line(
          `  (model call failed: ${oneLine(event.message)}; retry ${event.attempt} in ${Math.ceil(event.delayMs / 1000)}s)`,
        );
        break;
      case "model_end":
        screen.endLine();
        this.#spin(undefined);
        break;
      case "tool_start":
        screen.line(describeToolCall(event.name, event.input));
        this.#spin(`running ${event.name}`);
        break;
      case "permission_denied":
        this.#shownOutcome.add(event.toolUseId);
        screen.line(`  denied: ${oneLine(event.reason)}`);
        break;
      case "task_start":
        this.#shownOutcome.add(event.toolUseId);
        screen.line(`  started ${event.taskId} in the background`);
        break;
      case "tool_end":
        this.#spin(undefined);
        if (!this.#shownOutcome.delete(event.toolUseId)) {
          screen.line(describeToolResult(event.content, event.isError));
        }
        break;
      case "task_end":
        screen.line(describeTaskEnd(event.taskId, event.status, event.command));
        break;
      case "inbox_delivered":
        // Also the first event of a turn started by a wake-up.
        this.#setBusy(true);
        if (event.taskIds.length > 0) {
          screen.line(`  (${event.taskIds.join(", ")} reported to the agent)`);
        }
        break;
      case "compaction_start":
        this.#spin("compacting the conversation");
        break;
      case "compaction_end":
        this.#spin(undefined);
        if (event.error === undefined) {
          screen.line(
            `  context compacted: ${formatTokens(event.preTokens)} -> ${formatTokens(event.postTokens)} tokens`,
          );
        } else if (event.trigger === "auto") {
          screen.line(`  (could not compact: ${oneLine(event.error)})`);
        }
        break;
      case "session_cleared":
        screen.line(
          `  new conversation ${event.sessionId} (the previous one: rudder chat --resume ${event.previousSessionId})`,
        );
        break;
      case "hook_warning":
        screen.line(`  hook warning (${event.event}): ${oneLine(event.message)}`);
        break;
      case "turn_end": {
        screen.endLine();
        this.#spin(undefined);
        const summary = describeOutcome(event.outcome);
        if (summary !== undefined) screen.line(summary);
        this.#setBusy(false);
        break;
      }
    }
  }

  /** Prints a line of the chat's own (a command's output, a hint). */
  notice(text: string): void {
    if (!this.#closed) this.#screen.line(text);
  }

  /** Shows a question on the live line until `endQuestion`. */
  ask(explanation: string): void {
    this.#screen.line(explanation);
    this.#question = QUESTION_PROMPT;
    this.#updatePrompt();
  }

  endQuestion(): void {
    this.#question = undefined;
    // The time spent answering is not the tool's: its clock starts now.
    const label = this.#spinner.label;
    if (label !== undefined) this.#spinner.start(label);
    else this.#updatePrompt();
  }

  get asking(): boolean {
    return this.#question !== undefined;
  }

  /** The prompt the live line shows now (what a just-entered line was typed after). */
  prompt(): string | undefined {
    if (this.#question !== undefined) return this.#question;
    if (!this.#busy) return IDLE_PROMPT;
    if (!this.#screen.interactive) return undefined;
    return this.#spinner.active ? `${this.#spinner.text()}  ${IDLE_PROMPT}` : IDLE_PROMPT;
  }

  /** Shows the prompt for the current state again (after a line used it up). */
  refreshPrompt(): void {
    this.#updatePrompt();
  }

  close(): void {
    this.#closed = true;
    this.#spinner.stop();
    this.#screen.close();
  }

  #setBusy(busy: boolean): void {
    if (this.#busy === busy) return;
    this.#busy = busy;
    this.#updatePrompt();
  }

  /** Starts the spinner with `label`, or stops it. Terminal only. */
  #spin(label: string | undefined): void {
    if (label !== undefined && this.#screen.interactive) {
      this.#spinner.start(label);
    } else if (this.#spinner.active) {
      this.#spinner.stop();
      this.#updatePrompt();
    }
  }

  #updatePrompt(): void {
    if (this.#closed) return;
    this.#screen.setPrompt(this.prompt());
  }
}
