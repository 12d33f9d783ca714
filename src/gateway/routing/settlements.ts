import type { AgentTurnResult } from "../agents/agent-process.js";
import type { ContextUsage } from "../agents/context-usage.js";
import { usageTokens } from "../budgets/usage-tokens.js";
import type { EventBus } from "../event-bus.js";
import type { GatewayEvent, SentFile, StoredMessage } from "../events.js";
import type { GatewayStore, MessageRecord, Settlement, TurnRecord } from "../store/store.js";
import { TurnDisplayRecorder } from "./turn-display-recorder.js";

/** How a message ended, for callers that wait on it (the scheduler). */
export interface SettledMessage {
  state: "answered" | "failed";
  reply: StoredMessage;
}

/** The part of a stored message that events carry. */
export function storedMessage(message: MessageRecord): StoredMessage {
  const { id, channelId, role, text, state, replyTo, kind, createdAt, answers, source } = message;
  const stored: StoredMessage = { id, channelId, role, text, state, replyTo, kind, createdAt };
  if (role === "user") stored.source = source;
  if (message.files !== undefined) stored.files = message.files;
  if (message.attachments !== undefined) stored.attachments = message.attachments;
  return answers === undefined ? stored : { ...stored, answers };
}

function turnRecord(result: AgentTurnResult, binding: string | null): TurnRecord {
  const tokens = usageTokens(result.usage);
  return {
    binding,
    inputTokens: tokens.input,
    outputTokens: tokens.output,
    result: result.result,
    costUsd: result.costUsd ?? result.totalCostUsd ?? null,
    usage: result.usage ?? null,
    durationMs: result.durationMs ?? null,
    numTurns: result.numTurns ?? null,
    isError: result.isError,
    subtype: result.subtype ?? null,
    sessionId: result.sessionId ?? null,
  };
}

/** The files an agent sent in its turn (`SentFiles` in media/), kept with the turn's reply. */
export interface TurnFiles {
  record(event: GatewayEvent): void;
  take(channelId: string): Promise<SentFile[]>;
}

/** How long a channel's context usage waits for a settlement to be stored with, at most. */
export const CONTEXT_WRITE_DELAY_MS = 1000;

/**
 * Writes how user messages ended (with the reply, fallback or error answering
 * them, and the turn's cost) and tells the bus and anyone waiting. A message
 * already answered is never answered again (`settle` then resolves to null,
 * else to the reply).
 */
export class Settlements {
  readonly #store: GatewayStore;
  readonly #bus: EventBus;
  /** Each channel's turn so far, stored with the reply or error that ends it. */
  readonly displays = new TurnDisplayRecorder();
  readonly #bindingOf: (channelId: string) => string | null;
  readonly #files: TurnFiles | undefined;
  readonly #waiters = new Map<string, Array<(settled: SettledMessage) => void>>();
  /** Context usage of channels not stored yet (see `noteContext`). */
  readonly #context = new Map<string, ContextUsage | null>();
  #contextTimer: NodeJS.Timeout | undefined;

  /** `bindingOf`: the binding a channel's turns count under (their spend is stored with it). */
  constructor(
    store: GatewayStore,
    bus: EventBus,
    bindingOf: (channelId: string) => string | null = () => null,
    files?: TurnFiles,
  ) {
    this.#store = store;
    this.#bus = bus;
    this.#bindingOf = bindingOf;
    this.#files = files;
  }

  /** Follows one of a turn's events: what the page shows of it, and the files it sends. */
  record(event: GatewayEvent): void {
    this.displays.record(event);
    this.#files?.record(event);
  }

  /** Resolves when the message is answered or has failed (a deferral is not an end). */
  settled(messageId: string): Promise<SettledMessage> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(messageId) ?? [];
      list.push(resolve);
      this.#waiters.set(messageId, list);
    });
  }

  /**
   * How full the channel's context is: stored with the channel's next settlement (a turn's
   * result line says it just before the turn is settled, so one write does for both), or
   * within `CONTEXT_WRITE_DELAY_MS` when none comes (a line between turns). A gateway killed
   * meanwhile loses that figure; the channel's next result says it again.
   */
  noteContext(channelId: string, usage: ContextUsage | null): void {
    this.#context.set(channelId, usage);
    this.#contextTimer ??= setTimeout(() => {
      this.#contextTimer = undefined;
      void this.flushContext().catch(() => {});
    }, CONTEXT_WRITE_DELAY_MS).unref();
  }

  /** Stores the channel's context usage now (a command's figure), replacing one still waiting. */
  storeContext(channelId: string, usage: ContextUsage | null): Promise<void> {
    this.#context.delete(channelId);
    return this.#store.setChannelContext(channelId, usage);
  }

  /** Stores the context usage still waiting for a settlement (the timer's work, and shutdown's). */
  async flushContext(): Promise<void> {
    const waiting = [...this.#context];
    this.#context.clear();
    for (const [channelId, usage] of waiting) await this.#store.setChannelContext(channelId, usage);
  }

  async settle(
    messages: MessageRecord[],
    state: Settlement["state"],
    reply: Settlement["reply"],
    details: { result?: AgentTurnResult | undefined; retryAt?: Date | undefined } = {},
  ): Promise<StoredMessage | null> {
    const first = messages[0];
    if (!first) return null;
    const channelId = first.channelId;
    const context = this.#context.get(channelId);
    const withContext = this.#context.delete(channelId);
    // What the page showed of the turn goes with the reply or error that ended it; a fallback
    // (the turn runs again later) keeps nothing.
    const display = this.displays.take(channelId);
    const ends = reply.kind === "reply" || reply.kind === "error";
    const kept = display !== null && ends;
    // A fallback's turn runs again later: the files sent so far wait for its reply.
    const files = ends && this.#files ? await this.#files.take(channelId) : [];
    const record = await this.#store.settle({
      messageIds: messages.map((message) => message.id),
      state,
      reply,
      ...(details.retryAt ? { retryAt: details.retryAt.toISOString() } : {}),
      ...(details.result ? { turn: turnRecord(details.result, this.#bindingOf(channelId)) } : {}),
      ...(withContext ? { context: context ?? null } : {}),
      ...(kept ? { display: JSON.stringify(display) } : {}),
      ...(files.length > 0 ? { files } : {}),
    });
    if (!record) return null;
    const message = storedMessage(record);
    for (const { id } of messages) {
      this.#bus.publish({ type: "message_state", messageId: id, state, channelId });
      if (state === "deferred") continue;
      for (const resolve of this.#waiters.get(id) ?? []) resolve({ state, reply: message });
      this.#waiters.delete(id);
    }
    if (reply.kind === "fallback") {
      const retryAt = (details.retryAt ?? new Date()).toISOString();
      this.#bus.publish({ type: "fallback", message, retryAt, channelId });
    } else if (reply.kind === "error") {
      this.#bus.publish({ type: "error", message, channelId });
    } else {
      this.#bus.publish({ type: "reply", message, channelId });
    }
    return message;
  }
}
