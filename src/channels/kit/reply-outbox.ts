import type { SentFile } from "../../gateway/events.js";
import type {
  NewOutbound,
  OutboundEntry,
  OutboundKind,
  OutboundLedger,
} from "../../gateway/store/source-store.js";
import { type Backoff, backoffDelayMs } from "./backoff.js";
import type { ChatPlatform, OutgoingChat } from "./chat-platform.js";
import { type ReadSentFile, sendFileEntry } from "./sent-file-delivery.js";
import { splitMessage } from "./split-message.js";

/** Past this age an unsent message is given up, with a line in its channel's history. */
export const DEFAULT_FRESHNESS_MS = 3 * 60 * 60_000;

/** One send or edit without an answer this long is abandoned and tried again. */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;

export interface ReplyOutboxOptions {
  platform: ChatPlatform;
  ledger: OutboundLedger;
  worker: string;
  signal: AbortSignal;
  backoff: Backoff;
  sendTimeoutMs?: number | undefined;
  freshnessMs?: number | undefined;
  /** The clock freshness is judged by (tests move it hours on). */
  now?: (() => number) | undefined;
  log: (line: string) => void;
  onBadToken: (status: number) => void;
  /** The bytes of a file the agent sent; absent: the chat is told in text where it is. */
  readSentFile?: ReadSentFile | undefined;
  /** Called once a file's entry is sent or given up (the gateway's copy of it may go). */
  releaseSentFile?: ((file: SentFile) => Promise<void>) | undefined;
}

/** What a recorded message resolves to: its ledger id, and the platform's id once sent. */
export interface Recorded {
  id: string;
  delivered: Promise<string | null>;
}

interface Waiter {
  resolve: (platformId: string | null) => void;
}

/**
 * The way out of every chat source, over the reply ledger: each message is recorded in the
 * store before it is sent and marked with the platform's id after; per channel, entries go out
 * in order. A failure waits (the platform's `retry_after` first, else the backoff) and tries
 * again, for as long as the entry is fresh; older, it is given up with a line in the channel's
 * history. Edits wait for the edit interval of their chat. `resume` takes what a gateway killed
 * at any point left unsent; a send it may have made already goes again marked "may repeat".
 * Never rejects.
 */
export class ReplyOutbox {
  readonly #options: ReplyOutboxOptions;
  readonly #queues = new Map<string, Promise<void>>();
  readonly #queued = new Set<string>();
  readonly #waiters = new Map<string, Waiter[]>();
  readonly #lastEdit = new Map<string, number>();
  readonly #groups = new Set<string>();
  /**
   * Channels whose oldest unsent entry another worker is sending now (its claim live): their
   * later entries wait for the next `resume` rather than overtake it. Only a `resume` that finds
   * the channel's queue empty lifts it: entries still queued from an earlier pass would
   * otherwise run unblocked behind the one they must wait for.
   */
  readonly #blocked = new Set<string>();
  /** Per channel, the last record write: entries are recorded (and queued) in call order. */
  readonly #recording = new Map<string, Promise<unknown>>();
  /** Sends taken again after a gateway died while sending them (they may show twice). */
  recovered = 0;
  /**
   * Settles when the outbox stops: the one listener on its signal, however many channels wait
   * or send at once (a listener each, on the source's long-lived signal, made the gateway warn
   * of a leak past ten at once).
   */
  readonly #stopped: Promise<void>;

  constructor(options: ReplyOutboxOptions) {
    this.#options = options;
    const { signal } = options;
    this.#stopped = signal.aborted
      ? Promise.resolve()
      : new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }

  /** Marks a channel as a group chat (a slower edit rate). */
  group(channelId: string): void {
    this.#groups.add(channelId);
  }

  /**
   * Records `message` (split to the platform's length, one entry a part), then each file the
   * agent sent with it, in one write (`origin`: the stored message it carries), and queues
   * them in that order. Resolves to the first entry recorded; null when `origin` was recorded before.
   */
  async send(
    channelId: string,
    kind: OutboundKind,
    message: OutgoingChat,
    origin?: string,
    files: readonly SentFile[] = [],
  ): Promise<Recorded | null> {
    const limit = this.#options.platform.limits.messageLength;
    const parts = splitMessage(message.text.trim() === "" ? "(no text)" : message.text, limit);
    const entry = { source: this.#options.platform.name, channelId, action: "send" as const };
    const entries: NewOutbound[] = [
      ...parts.map((text, index) => ({
        ...entry,
        kind,
        origin: origin === undefined ? undefined : index === 0 ? origin : `${origin}#${index + 1}`,
        body: JSON.stringify({ ...message, text }),
      })),
      // A file's bytes are read when it is sent.
      ...files.map((file, index) => ({
        ...entry,
        kind: "file" as const,
        origin: origin === undefined ? undefined : `${origin}:file:${index + 1}`,
        body: JSON.stringify({ file }),
      })),
    ];
    const recorded = await this.#inOrder(channelId, async () =>
      (await this.#options.ledger.recordAll(entries)).map((row) => ({
        id: row.id,
        delivered: this.#enqueue(row),
      })),
    );
    return recorded[0] ?? null;
  }

  /** Records an edit of the message `target` (a ledger id) sent, and queues it. */
  async edit(
    channelId: string,
    target: string,
    kind: OutboundKind,
    message: OutgoingChat,
  ): Promise<void> {
    await this.#inOrder(channelId, async () => {
      const entry = await this.#options.ledger.record({
        source: this.#options.platform.name,
        channelId,
        kind,
        action: "edit",
        target,
        body: JSON.stringify(message),
      });
      if (entry) void this.#enqueue(entry);
    });
  }

  /**
   * Runs `write` after the channel's earlier record writes settle: callers fire several at once
   * (a steered turn's answers come back to back), and concurrent writes on a pool of
   * connections take their places in the ledger in whatever order they happen to finish.
   */
  #inOrder<T>(channelId: string, write: () => Promise<T>): Promise<T> {
    const previous = this.#recording.get(channelId) ?? Promise.resolve();
    const next = previous.then(write);
    const settled = next.catch(() => undefined);
    this.#recording.set(channelId, settled);
    void settled.then(() => {
      if (this.#recording.get(channelId) === settled) this.#recording.delete(channelId);
    });
    return next;
  }

  /** Queues what the ledger holds unsent for this source (after a restart). */
  async resume(): Promise<number> {
    const entries = await this.#options.ledger.unsent(this.#options.platform.name);
    for (const channelId of [...this.#blocked]) {
      if (!this.#queues.has(channelId)) this.#blocked.delete(channelId);
    }
    for (const entry of entries) void this.#enqueue(entry);
    return entries.length;
  }

  /** Resolves when every queue is empty (or the outbox stopped). */
  async idle(): Promise<void> {
    while (this.#queues.size > 0) await Promise.all(this.#queues.values());
  }

  #enqueue(entry: OutboundEntry): Promise<string | null> {
    const delivered = new Promise<string | null>((resolve) => {
      const waiting = this.#waiters.get(entry.id) ?? [];
      waiting.push({ resolve });
      this.#waiters.set(entry.id, waiting);
    });
    if (this.#queued.has(entry.id)) return delivered;
    this.#queued.add(entry.id);
    const channelId = entry.channelId;
    const previous = this.#queues.get(channelId) ?? Promise.resolve();
    const next = previous.then(() => this.#deliver(entry.id, channelId));
    this.#queues.set(channelId, next);
    void next.then(() => {
      if (this.#queues.get(channelId) === next) this.#queues.delete(channelId);
    });
    return delivered;
  }

  #settle(id: string, platformId: string | null): void {
    this.#queued.delete(id);
    for (const waiter of this.#waiters.get(id) ?? []) waiter.resolve(platformId);
    this.#waiters.delete(id);
  }

  async #deliver(id: string, channelId: string): Promise<void> {
    const { signal } = this.#options;
    let platformId: string | null = null;
    try {
      platformId = await this.#attempts(id, channelId);
    } catch (error) {
      if (!signal.aborted) this.#options.log(`${this.#name}: ledger entry ${id}: ${String(error)}`);
    } finally {
      this.#settle(id, platformId);
    }
  }

  get #name(): string {
    return this.#options.platform.name;
  }

  /** Tries until sent, given up or stopped; the platform's id when sent. */
  async #attempts(id: string, channelId: string): Promise<string | null> {
    const { ledger, worker, signal, backoff, log } = this.#options;
    const now = this.#options.now ?? Date.now;
    const timeoutMs = this.#options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
    const freshnessMs = this.#options.freshnessMs ?? DEFAULT_FRESHNESS_MS;
    for (let failures = 0; !signal.aborted; ) {
      const stored = await ledger.get(id);
      if (stored === null || stored.state === "sent" || stored.state === "given_up") {
        return stored?.platformId ?? null;
      }
      // Left in the ledger for the next `resume`, in order behind the entry another worker holds.
      if (this.#blocked.has(channelId)) return null;
      const wait = Date.parse(stored.nextAt) - Date.now();
      if (wait > 0) await this.#pause(wait);
      // Held for the send's time and half as long again (15 s at most) to record its outcome.
      const entry = await ledger.claim(id, worker, timeoutMs + Math.min(15_000, timeoutMs / 2));
      if (entry === null) {
        if ((await ledger.get(id))?.state === "sending") this.#blocked.add(channelId);
        return null;
      }
      const age = now() - Date.parse(entry.createdAt);
      if (age > freshnessMs) {
        await ledger.giveUp(id, this.#givenUpLine(entry, age));
        await this.#release(entry);
        log(`${this.#name}: gave up a ${entry.kind} to ${channelId} after ${hours(age)}`);
        return null;
      }
      if (entry.mayRepeat && entry.action === "send" && entry.attempts > 0) {
        this.recovered += 1;
        log(`${this.#name}: sending a ${entry.kind} to ${channelId} again (recovered, may repeat)`);
      }
      try {
        const platformId = await this.#once(entry, timeoutMs);
        if (platformId === null) return null;
        await ledger.sent(id, platformId);
        await this.#release(entry);
        return platformId;
      } catch (error) {
        if (signal.aborted) return null;
        const failure = this.#options.platform.failure(error);
        if (failure.kind === "bad_token") {
          this.#options.onBadToken(401);
          await ledger.retry(id, new Date(), describe(error));
          return null;
        }
        if (failure.kind === "refused") {
          const line = `A message to this chat was refused by ${this.#name} and not sent: ${this.#options.platform.redact(describe(error))}`;
          await ledger.giveUp(id, line);
          await this.#release(entry);
          log(`${this.#name}: could not send to ${channelId}, dropped: ${describe(error)}`);
          return null;
        }
        failures += 1;
        const delay = backoffDelayMs(
          failures,
          backoff,
          failure.kind === "transient" ? failure.retryAfterMs : undefined,
        );
        await ledger.retry(id, new Date(Date.now() + delay), describe(error));
      }
    }
    return null;
  }

  /** A file's entry is done with: the gateway's copy of its bytes may go. */
  async #release(entry: OutboundEntry): Promise<void> {
    if (entry.kind !== "file" || !this.#options.releaseSentFile) return;
    const { file } = JSON.parse(entry.body) as { file: SentFile };
    await this.#options.releaseSentFile(file).catch(() => undefined);
  }

  /** One send or edit, abandoned after `timeoutMs`; null when there is nothing to do. */
  async #once(entry: OutboundEntry, timeoutMs: number): Promise<string | null> {
    const { platform, ledger, signal } = this.#options;
    const message = JSON.parse(entry.body) as OutgoingChat;
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new Error(`no answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    // Follows the outbox's signal without a listener on it (`any` holds its sources weakly).
    const attempt = AbortSignal.any([signal, timeout.signal]);
    try {
      if (entry.kind === "file") {
        return await sendFileEntry(entry, platform, this.#options.readSentFile, attempt);
      }
      if (entry.action === "send") {
        return await this.#withMarkupFallback(message, (chat) =>
          platform.send(entry.channelId, chat, attempt),
        );
      }
      const target = entry.target === null ? null : await ledger.get(entry.target);
      if (target === null || target.state === "given_up") return null;
      if (target.platformId === null) throw new Error("the message to edit is not sent yet");
      await this.#editPause(entry.channelId);
      const platformId = target.platformId;
      await this.#withMarkupFallback(message, (chat) =>
        platform.edit(entry.channelId, platformId, chat, attempt),
      ).catch((error: unknown) => {
        if (platform.failure(error).kind !== "unchanged") throw error;
      });
      return platformId;
    } finally {
      clearTimeout(timer);
    }
  }

  async #withMarkupFallback<T>(
    message: OutgoingChat,
    call: (message: OutgoingChat) => Promise<T>,
  ): Promise<T> {
    try {
      return await call(message);
    } catch (error) {
      if (message.format !== "markdown") throw error;
      if (this.#options.platform.failure(error).kind !== "markup") throw error;
      return call({ ...message, format: "plain" });
    }
  }

  /** Waits out the chat's edit interval since its last edit. */
  async #editPause(channelId: string): Promise<void> {
    const interval = this.#options.platform.limits.editIntervalMs(this.#groups.has(channelId));
    const since = Date.now() - (this.#lastEdit.get(channelId) ?? 0);
    if (since < interval) await this.#pause(interval - since);
    this.#lastEdit.set(channelId, Date.now());
  }

  /** Waits `milliseconds`, or less when the outbox stops. */
  async #pause(milliseconds: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise((resolve) => {
        timer = setTimeout(resolve, milliseconds);
      }),
      this.#stopped,
    ]);
    clearTimeout(timer);
  }

  #givenUpLine(entry: OutboundEntry, age: number): string {
    const what = entry.kind === "answer" ? "An answer" : `A ${entry.kind} message`;
    return `${what} could not be delivered to ${this.#name} for ${hours(age)} and was given up.`;
  }
}

function hours(milliseconds: number): string {
  const minutes = Math.round(milliseconds / 60_000);
  return minutes >= 120 ? `${Math.round(minutes / 60)} hours` : `${minutes} minutes`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
