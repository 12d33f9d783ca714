import type { AgentEvent } from "../../agent/events.js";
import { parseLocalCommand } from "../../agent/local-command.js";
import type { Session } from "../../agent/session.js";
import type { ConfirmRequest } from "../../agent/tool-dispatch.js";
import { CHAT_HELP, describeTasks, oneLine } from "./chat-format.js";
import type { ChatRenderer } from "./chat-renderer.js";
import type { ChatScreen } from "./chat-screen.js";

/** What the controller needs of the line input (see `ChatInput`). */
export interface ChatLineSource {
  readonly terminal: boolean;
  readonly line: string;
  clearLine(): void;
  /** Puts text into the line being edited, as if typed. */
  prefill(text: string): void;
  close(): void;
}

export interface ChatControllerOptions {
  session: Session;
  renderer: ChatRenderer;
  screen: ChatScreen;
  input: ChatLineSource;
  /** Start a turn as soon as a background task ends while the agent is idle. */
  wake: boolean;
}

const YES = /^\s*y(es)?\s*$/i;

/**
 * The chat's behaviour: what an entered line, Ctrl-C and Ctrl-D do in each
 * state, answering `ask` decisions, waking on finished background tasks, and
 * leaving with nothing left running.
 *
 * In a terminal, a line entered while a turn runs steers it. Without one
 * (piped input), lines wait their turn: each starts a turn once the previous
 * one has ended, or answers the question being asked.
 */
export class ChatController {
  readonly #session: Session;
  readonly #renderer: ChatRenderer;
  readonly #screen: ChatScreen;
  readonly #input: ChatLineSource;
  readonly #wake: boolean;
  readonly #stop = new AbortController();
  readonly #pending: string[] = [];
  #answer: ((allowed: boolean) => void) | undefined;
  #waking = false;
  #inputEnded = false;
  #interruptsAtIdle = 0;
  /** Whether the chat has said when an idle agent hears of a finished task. */
  #deliveryExplained = false;
  #closing: Promise<void> | undefined;
  #finished!: (code: number) => void;
  /** Resolves to the exit code once the chat has closed everything. */
  readonly finished = new Promise<number>((resolve) => {
    this.#finished = resolve;
  });

  constructor(options: ChatControllerOptions) {
    this.#session = options.session;
    this.#renderer = options.renderer;
    this.#screen = options.screen;
    this.#input = options.input;
    this.#wake = options.wake;
    this.#session.subscribe((event) => this.#onEvent(event));
  }

  /** The `confirm` for `ask` decisions: asks on the live line, reads the next line. */
  confirm(request: ConfirmRequest, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal.aborted || this.#closing !== undefined || this.#answer !== undefined) {
        resolve(false);
        return;
      }
      const onAbort = (): void => finish(false);
      const finish = (allowed: boolean): void => {
        signal.removeEventListener("abort", onAbort);
        this.#answer = undefined;
        this.#renderer.endQuestion();
        resolve(allowed);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#answer = finish;
      this.#renderer.ask(`  ${request.toolName} needs permission: ${oneLine(request.reason)}`);
      this.#drain();
    });
  }

  /** A line was entered. */
  line(text: string): void {
    if (this.#closing !== undefined) return;
    this.#pending.push(text);
    this.#drain();
  }

  /** Ctrl-C: aborts the running turn; at an idle prompt clears it, twice leaves. */
  interrupt(): void {
    if (this.#closing !== undefined) return;
    if (this.#session.running || this.#answer !== undefined) {
      this.#session.abort("interrupted by the user");
      return;
    }
    if (this.#input.line !== "") {
      this.#input.clearLine();
      this.#interruptsAtIdle = 0;
      return;
    }
    this.#interruptsAtIdle += 1;
    if (this.#interruptsAtIdle >= 2) {
      void this.quit();
      return;
    }
    this.#renderer.notice("(press Ctrl-C again to leave, or type /quit)");
  }

  /** Any key but Ctrl-C breaks a run of Ctrl-C presses. */
  keypress(name: string | undefined, ctrl: boolean): void {
    if (!(ctrl && name === "c")) this.#interruptsAtIdle = 0;
    if (!ctrl) this.#screen.beforeKey();
  }

  /**
   * Ctrl-D or the end of the input. In a terminal it leaves at once; piped
   * input first lets the queued lines and the running turn finish.
   */
  end(): void {
    this.#inputEnded = true;
    if (this.#input.terminal) {
      void this.quit();
      return;
    }
    this.#drain();
  }

  /** Leaves: aborts the running turn, kills every background task, closes the input. */
  quit(): Promise<void> {
    // Marked as closing before any of the work, which fires events back here.
    this.#closing ??= Promise.resolve().then(() => this.#close());
    return this.#closing;
  }

  async #close(): Promise<void> {
    try {
      this.#stop.abort();
      this.#answer?.(false);
      await this.#session.close();
    } finally {
      this.#renderer.close();
      this.#input.close();
      this.#finished(0);
    }
  }

  #onEvent(event: AgentEvent): void {
    this.#renderer.handle(event);
    if (event.type === "turn_start") this.#interruptsAtIdle = 0;
    if (event.type !== "task_end" || this.#session.running) return;
    if (this.#wake) {
      this.#maybeWake();
    } else if (!this.#deliveryExplained) {
      this.#deliveryExplained = true;
      this.#renderer.notice(
        "  (the agent gets this with your next message; rudder chat --wake would tell it now)",
      );
    }
  }

  /** Hands queued lines on: to the question, to a new turn, or (terminal) to the running turn. */
  #drain(): void {
    while (this.#pending.length > 0 && this.#closing === undefined) {
      const answer = this.#answer;
      if (answer !== undefined) {
        const text = this.#pending.shift() ?? "";
        this.#screen.lineEntered(text, true);
        answer(YES.test(text));
        continue;
      }
      if (this.#session.running && !this.#input.terminal) return;
      const text = this.#pending.shift() ?? "";
      if (this.#session.running) this.#steer(text);
      else this.#idleLine(text);
    }
    const unanswerable = this.#answer;
    if (this.#inputEnded && this.#pending.length === 0 && unanswerable !== undefined) {
      this.#screen.lineEntered("", true);
      unanswerable(false);
    }
    if (
      this.#inputEnded &&
      this.#closing === undefined &&
      !this.#session.running &&
      this.#answer === undefined
    ) {
      if (this.#wake && this.#session.background.hasPendingWork()) this.#maybeWake();
      else if (!this.#waking) void this.quit();
    }
  }

  #steer(text: string): void {
    this.#screen.lineEntered(text, false);
    const command = text.trim();
    if (command.startsWith("/")) {
      this.#renderer.notice(`> ${command}`);
      this.#command(command);
      return;
    }
    if (command === "") return;
    this.#renderer.notice(`> ${text}  (steering the running turn)`);
    void this.#session.send(text);
  }

  #idleLine(text: string): void {
    this.#screen.lineEntered(text, true);
    const command = text.trim();
    if (command.startsWith("/")) this.#command(command);
    else if (command !== "") this.#startTurn(text);
    if (this.#closing === undefined) this.#renderer.refreshPrompt();
  }

  #command(command: string): void {
    const name = command.split(/\s+/)[0] ?? "";
    if (name === "/quit" || name === "/exit") {
      void this.quit();
    } else if (name === "/help") {
      this.#renderer.notice(CHAT_HELP);
    } else if (name === "/compact" || name === "/clear") {
      const local = parseLocalCommand(command);
      const run =
        local?.name === "compact"
          ? this.#session.compact(local.focus, this.#stop.signal)
          : this.#session.clear();
      run.then(
        () => this.#afterTurn(),
        (error: unknown) => this.#internalError(error),
      );
    } else if (name === "/tasks") {
      this.#renderer.notice(describeTasks(this.#session.background.tasks.values()));
    } else {
      this.#renderer.notice(`unknown command ${name} (try /help)`);
    }
  }

  #startTurn(text: string): void {
    this.#session.send(text, this.#stop.signal).then(
      (outcome) => {
        if (outcome.subtype === "aborted") this.#giveBackUnread();
        this.#afterTurn();
      },
      (error: unknown) => this.#internalError(error),
    );
  }

  /**
   * Text typed to steer a turn that Ctrl-C ended before its next model call never reached the
   * model: it goes back to the prompt, to send again or edit, rather than joining whatever is
   * typed next.
   */
  #giveBackUnread(): void {
    const unread = this.#session.inbox.drain();
    if (unread.length === 0 || this.#closing !== undefined) return;
    this.#renderer.notice(
      "  (what you typed during the turn was not sent; it is back at the prompt)",
    );
    this.#screen.beforeKey();
    this.#input.prefill(unread.join(" "));
  }

  /** Runs after the turn has fully ended, so a new `send` starts a new turn. */
  #afterTurn(): void {
    if (this.#closing !== undefined) return;
    this.#drain();
    if (!this.#session.running) this.#maybeWake();
  }

  #maybeWake(): void {
    if (!this.#wake || this.#waking || this.#closing !== undefined) return;
    const finishedWaiting = [...this.#session.background.tasks.values()].some(
      (task) => task.status !== "running" && !task.delivered,
    );
    if (!finishedWaiting && !this.#inputEnded) return;
    this.#waking = true;
    // A finished task wakes the agent at once, not after the slowest task
    // (a dev server may never end); at end of input every task is waited for.
    this.#session.wake(this.#stop.signal, { waitForRunning: this.#inputEnded }).then(
      (outcome) => {
        this.#waking = false;
        if (outcome !== undefined) this.#afterTurn();
        else if (this.#inputEnded) this.#drain();
      },
      (error: unknown) => this.#internalError(error),
    );
  }

  #internalError(error: unknown): void {
    this.#renderer.notice(`rudder: internal error: ${String(error)}`);
  }
}
