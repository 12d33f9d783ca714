import type { AgentEvent, TurnOutcome } from "../agent/events.js";
import { type LocalCommand, parseLocalCommand } from "../agent/local-command.js";
import type { Session } from "../agent/session.js";
import type { ImageBlock } from "../model/types.js";
import { CompactionReporter } from "./compaction-reporter.js";
import {
  answerControlRequest,
  type ControlTarget,
  type PromptOverrides,
} from "./control-requests.js";
import { EventLines } from "./event-lines.js";
import { fixedControls, type HostControls } from "./host-controls.js";
import { HostRequests } from "./host-requests.js";
import { parseInputLine } from "./input-line.js";
import {
  hookResponseLine,
  initLine,
  inputErrorLine,
  lifecycleLine,
  type OutputLine,
  type SessionInfo,
} from "./output-lines.js";
import { PartialMessages } from "./partial-messages.js";
import { PendingImages } from "./pending-images.js";
import { confirmForMode, type PermissionMode } from "./permission-mode.js";
import { PermissionPrompt } from "./permission-prompt.js";
import { registerSdkHooks } from "./sdk-hooks.js";
import { SessionPreparation } from "./session-preparation.js";
import type { StreamJsonFrontEndOptions } from "./stream-json-options.js";
import { TurnEndLines } from "./turn-end-lines.js";
import { WakeGate } from "./wake-gate.js";

export type { SessionOverrides, StreamJsonFrontEndOptions } from "./stream-json-options.js";

interface FrontEndTurn {
  uuids: string[];
  /** Set when the turn runs `/compact` or `/clear` rather than the model. */
  command?: LocalCommand["name"];
}

/**
 * A `Session` spoken to in Claude Code's stream-json dialect: input lines in
 * (`handleLine`), output lines out (`write`). A message arriving mid-turn joins the running
 * turn through the session's inbox, so one `result` answers both. When input ends, the
 * queued work and the background tasks are finished before `endInput` resolves.
 */
export class StreamJsonFrontEnd {
  readonly #options: StreamJsonFrontEndOptions;
  readonly #prompt: PermissionPrompt | undefined;
  readonly #partial: PartialMessages | undefined;
  readonly #hostRequests: HostRequests;
  readonly #wakeGate: WakeGate;
  readonly #hookCallbackIds = new Set<string>();
  #info: Omit<SessionInfo, "permissionMode">;
  readonly #preparation: SessionPreparation;
  readonly #changeWaiters = new Set<() => void>();
  /** Uuids of texts pushed into the inbox, in order (undefined for a text without one). */
  readonly #steers: Array<string | undefined> = [];
  readonly #turnEnds = new TurnEndLines();
  readonly #eventLines = new EventLines();
  #session: Session | undefined;
  #turn: FrontEndTurn | undefined;
  /** Steering texts a turn ended without reading; they run as the next turn. */
  #carried: { texts: string[]; images: ImageBlock[]; uuids: string[] } | undefined;
  readonly #images = new PendingImages();
  /** Messages behind a `/compact` or `/clear` that waits for the running turn, in order. */
  readonly #queued: Array<{ text: string; uuid: string | undefined }> = [];
  readonly #compaction = new CompactionReporter((line) => this.#write(line));
  #currentToolUseId: string | undefined;
  #mode: PermissionMode;
  #overrides: PromptOverrides = {};

  constructor(options: StreamJsonFrontEndOptions) {
    this.#options = options;
    this.#mode = options.permissionMode;
    this.#info = options.info;
    this.#preparation = new SessionPreparation({
      prepare: options.prepare,
      deliver: (text, uuid) => this.#deliver(text, uuid),
      onPrepared: (prepared) => {
        this.#info = { ...this.#info, tools: prepared.tools, mcpServers: prepared.mcpServers };
      },
      warn: (message) => this.#options.warn?.(message),
    });
    this.#hostRequests = new HostRequests(options.write);
    this.#prompt = options.permissionPrompt ? new PermissionPrompt(this.#hostRequests) : undefined;
    this.#wakeGate = new WakeGate(options.askBeforeWaking ? this.#hostRequests : undefined);
    this.#partial = options.includePartialMessages
      ? new PartialMessages(options.info.sessionId, options.info.model, options.write)
      : undefined;
  }

  get sessionId(): string {
    return this.#info.sessionId;
  }

  /** Handles one input line. Never throws: bad lines are reported and skipped. */
  handleLine(text: string): void {
    const line = parseInputLine(text);
    switch (line.type) {
      case "invalid":
        this.#write(inputErrorLine(this.sessionId, line.error, text));
        this.#options.warn?.(`skipped an input line: ${line.error}`);
        return;
      case "user":
        for (const warning of line.warnings) this.#options.warn?.(warning);
        this.#images.put(line.text, line.images);
        this.sendUserMessage(line.text, line.uuid);
        return;
      case "control_request": {
        const answer = answerControlRequest(line.requestId, line.request, this.#controlTarget());
        if (answer instanceof Promise) void answer.then((output) => this.#write(output));
        else for (const output of [answer].flat()) this.#write(output);
        return;
      }
      case "control_response":
        this.#hostRequests.answer(line.requestId, line.subtype, line.response, line.error);
        return;
      default:
        return;
    }
  }

  /**
   * Relays one MCP message to the host's in-process server `serverName` (an `mcp_message`
   * control request, as Claude Code sends it); resolves with the host's answer.
   */
  relayMcpMessage(
    serverName: string,
    message: unknown,
    signal: AbortSignal,
  ): Promise<{ ok: true; response: Record<string, unknown> } | { ok: false; error: string }> {
    return this.#hostRequests.send(
      { subtype: "mcp_message", server_name: serverName, message },
      signal,
    );
  }

  /** Reports an input line that could not even be split (too long). */
  reportInputError(error: string): void {
    this.#write(inputErrorLine(this.sessionId, error, ""));
    this.#options.warn?.(`skipped an input line: ${error}`);
  }

  sendUserMessage(text: string, uuid?: string): void {
    if (uuid !== undefined) this.#write(lifecycleLine(this.sessionId, uuid, "queued"));
    if (!this.#preparation.ready) {
      this.#preparation.hold(text, uuid, this.#options.awaitInitialize !== true);
      return;
    }
    this.#deliver(text, uuid);
  }

  #deliver(text: string, uuid: string | undefined, fromQueue = false): void {
    const session = this.#ensureSession();
    const command = parseLocalCommand(text);
    if ((this.#queued.length > 0 && !fromQueue) || (command !== undefined && session.running)) {
      this.#queued.push({ text, uuid });
      return;
    }
    if (command !== undefined) {
      const run = () =>
        command.name === "clear" ? session.clear() : session.compact(command.focus);
      this.#startTurn(uuid === undefined ? [] : [uuid], run, command.name);
      return;
    }
    const images = this.#images.take(text);
    if (session.running) {
      this.#steers.push(uuid);
      void session.send(text, undefined, images);
      return;
    }
    this.#startTurn(uuid === undefined ? [] : [uuid], () => session.send(text, undefined, images));
  }

  /**
   * Input has ended: answers nothing more from the host, finishes the running turn and
   * every background task (waking the model for their results), then closes the session.
   */
  async endInput(): Promise<void> {
    await this.#preparation.settle();
    this.#hostRequests.close();
    const session = this.#session;
    if (session === undefined) return;
    while (session.running || session.background.hasPendingWork() || this.#queued.length > 0) {
      await new Promise<void>((resolve) => this.#changeWaiters.add(resolve));
    }
    await session.close();
  }

  #write(line: OutputLine): void {
    this.#compaction.saw(line);
    this.#options.write(line);
  }

  #controlTarget(): ControlTarget {
    return {
      info: this.#info,
      mode: () => this.#mode,
      setMode: (mode) => {
        this.#mode = mode;
      },
      running: () => this.#session?.running === true,
      interrupt: () => {
        this.#session?.abort("interrupted");
        const queued = this.#steers.filter((uuid) => uuid !== undefined);
        return [...queued, ...this.#preparation.heldUuids()];
      },
      setPromptOverrides: (overrides) => {
        if (this.#session !== undefined) return false;
        this.#overrides = overrides;
        return true;
      },
      registerHooks: (hooks) =>
        registerSdkHooks(hooks, {
          add: this.#options.addHookCallback,
          send: (request, signal) => this.#hostRequests.send(request, signal),
          registered: this.#hookCallbackIds,
          warn: (message) => this.#options.warn?.(message),
        }),
      prepare: (servers) => this.#preparation.start(servers),
      controls: this.#controls(),
      warn: (message) => this.#options.warn?.(message),
    };
  }

  /** The host's controls; a model switch also renames the model on later lines. */
  #controls(): HostControls {
    const controls =
      this.#options.controls ??
      fixedControls(
        () => this.#info.model,
        () => this.#info.mcpServers ?? [],
      );
    return {
      ...controls,
      setModel: (name) => {
        const selected = controls.setModel(name);
        if (selected.ok) this.#info = { ...this.#info, model: selected.model };
        return selected;
      },
    };
  }

  #ensureSession(): Session {
    if (this.#session !== undefined) return this.#session;
    const prompt = this.#prompt?.confirm(
      () => this.#currentToolUseId,
      (reason) => this.#session?.abort(reason),
    );
    const session = this.#options.createSession({
      confirm: confirmForMode(() => this.#mode, prompt),
      ...this.#overrides,
    });
    session.subscribe((event) => this.#onEvent(event));
    session.background.onTaskEnd(() => queueMicrotask(() => this.#afterChange()));
    this.#session = session;
    return session;
  }

  /** A local command prints `system/init` where Claude Code does: after its work began. */
  #startTurn(
    uuids: string[],
    start: () => Promise<TurnOutcome | undefined>,
    command?: LocalCommand["name"],
  ): void {
    this.#turn = command === undefined ? { uuids } : { uuids, command };
    for (const uuid of uuids) this.#write(lifecycleLine(this.sessionId, uuid, "started"));
    if (command === undefined) this.#write(initLine({ ...this.#info, permissionMode: this.#mode }));
    start().then(
      (outcome) => {
        // A wake-up that found nothing to do ran no turn, so no `turn_end` cleared it.
        if (outcome === undefined) this.#turn = undefined;
        this.#afterChange();
      },
      (error: unknown) => {
        this.#options.warn?.(
          `turn failed: ${error instanceof Error ? error.message : String(error)}`,
        );
        this.#turn = undefined;
        this.#afterChange();
      },
    );
  }

  /**
   * After a turn or a background task ends: run carried steers, else wake for finished
   * tasks, then tell waiters.
   */
  #afterChange(): void {
    const session = this.#session;
    const carried = this.#carried;
    if (session !== undefined && !session.running && this.#turn === undefined && carried) {
      this.#carried = undefined;
      const text = carried.texts.join("\n\n");
      this.#startTurn(carried.uuids, () => session.send(text, undefined, carried.images));
    } else if (
      session !== undefined &&
      !session.running &&
      this.#turn === undefined &&
      this.#queued.length > 0
    ) {
      const next = this.#queued.shift() as { text: string; uuid: string | undefined };
      this.#deliver(next.text, next.uuid, true);
    } else if (session !== undefined && !session.running && this.#turn === undefined) {
      const finished = [...session.background.tasks.values()].some(
        (task) => task.status !== "running" && !task.delivered,
      );
      if (finished) {
        this.#wakeGate.wake(
          () => this.#startTurn([], () => session.wake(undefined, { waitForRunning: false })),
          () => !session.running && this.#turn === undefined,
        );
      }
    }
    for (const resolve of this.#changeWaiters) resolve();
    this.#changeWaiters.clear();
  }

  #onEvent(event: AgentEvent): void {
    const sessionId = this.sessionId;
    this.#partial?.onEvent(event);
    this.#turnEnds.record(event);
    const compaction = {
      sessionId,
      command: this.#turn?.command,
      userMessageUuid: this.#turn?.uuids[0],
      init: () => initLine({ ...this.#info, permissionMode: this.#mode }),
      renamed: (id: string) => {
        this.#info = { ...this.#info, sessionId: id };
      },
    };
    if (this.#compaction.onEvent(event, compaction)) return;
    const uuids = this.#turn?.uuids ?? [];
    for (const line of this.#eventLines.of(sessionId, this.#info.model, event, uuids)) {
      this.#write(line);
    }
    switch (event.type) {
      case "model_start":
        if (this.#session !== undefined) this.#options.persist?.(this.#session.history);
        return;
      case "tool_start":
        this.#currentToolUseId = event.toolUseId;
        return;
      case "tool_end":
        this.#currentToolUseId = undefined;
        return;
      case "inbox_delivered":
        for (const _text of event.texts) {
          const uuid = this.#steers.shift();
          if (uuid === undefined) continue;
          this.#turn?.uuids.push(uuid);
          this.#write(lifecycleLine(sessionId, uuid, "started"));
        }
        return;
      case "hook_warning":
        this.#options.warn?.(`${event.event} hook: ${event.message}`);
        if (this.#options.includeHookEvents) {
          this.#write(hookResponseLine(sessionId, event.event, event.message));
        }
        return;
      case "turn_end":
        this.#endTurn(event.outcome);
        return;
      default:
        return;
    }
  }

  #endTurn(outcome: TurnOutcome): void {
    const turn = this.#turn ?? { uuids: [] };
    this.#turn = undefined;
    // Steers still in the inbox when a turn ends (it failed or was interrupted) run as the
    // next turn, as Claude Code runs messages queued behind an interrupted one.
    const uuids = this.#steers.splice(0).filter((uuid) => uuid !== undefined);
    const texts = this.#session?.inbox.drain() ?? [];
    const images = this.#session?.inbox.drainImages() ?? [];
    if (texts.length > 0) this.#carried = { texts, images, uuids };
    const lines = this.#turnEnds.lines(this.sessionId, this.#info.model, outcome, turn.uuids);
    for (const line of lines) this.#write(line);
  }
}
