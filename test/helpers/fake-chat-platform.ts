/**
 * A chat platform in memory for the kit's tests: `receive` keeps the kit's handlers and
 * context until its signal aborts (counting how often it was started), `push` hands the kit a
 * message as the platform would, sends and edits are recorded with ids of their own.
 */
import type {
  ButtonPress,
  ChatPlatform,
  IncomingChat,
  OutgoingChat,
  PlatformFailure,
  PlatformHandlers,
  ReceiveContext,
} from "../../src/channels/kit/chat-platform.js";

export class FakeChatPlatform implements ChatPlatform {
  readonly name: string;
  readonly exclusive: boolean;
  readonly limits = { messageLength: 4000, editIntervalMs: () => 0 };
  readonly botName = "fakebot";
  readonly sent: Array<{ channelId: string; message: OutgoingChat }> = [];
  /** How many times `receive` was started, and whether it runs now. */
  receives = 0;
  receiving = false;
  #handlers: PlatformHandlers | undefined;
  #context: ReceiveContext | undefined;

  constructor(name = "fake", options: { exclusive?: boolean } = {}) {
    this.name = name;
    this.exclusive = options.exclusive ?? false;
  }

  get context(): ReceiveContext {
    if (!this.#context) throw new Error("the kit has not started receiving");
    return this.#context;
  }

  async receive(
    handlers: PlatformHandlers,
    signal: AbortSignal,
    context: ReceiveContext,
  ): Promise<void> {
    this.receives += 1;
    this.receiving = true;
    this.#handlers = handlers;
    this.#context = context;
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    this.receiving = false;
  }

  /** A message from `userId` in a direct chat with them, as the platform reports it. */
  incoming(userId: string, text: string, fields: Partial<IncomingChat> = {}): IncomingChat {
    return {
      channelId: `${this.name}:${userId}`,
      chatId: userId,
      userId,
      userName: `user ${userId}`,
      text,
      messageId: String(Math.floor(Math.random() * 1e9)),
      group: false,
      addressed: true,
      replyTo: undefined,
      attachments: [],
      meta: {},
      ...fields,
    };
  }

  /** Hands the kit a message; resolves once it is handled (stored and routed, or answered). */
  push(message: IncomingChat): Promise<void> {
    if (!this.#handlers) throw new Error("the kit has not started receiving");
    return this.#handlers.message(message);
  }

  /** Hands the kit a press of a button; resolves once it is handled. */
  press(press: ButtonPress): Promise<void> {
    if (!this.#handlers) throw new Error("the kit has not started receiving");
    return this.#handlers.button(press);
  }

  /** Sends tried, answered or not. */
  readonly attempted: Array<{ channelId: string; message: OutgoingChat }> = [];
  /** While true, a send never answers (and ignores its signal): a worker frozen mid-send. */
  sendsHang = false;
  readonly #hung: Array<(error: Error) => void> = [];

  /** Fails every hung send at once (a test's cleanup). */
  thaw(): void {
    this.sendsHang = false;
    for (const reject of this.#hung.splice(0)) reject(new Error("thawed"));
  }

  async send(channelId: string, message: OutgoingChat): Promise<string> {
    this.attempted.push({ channelId, message });
    if (this.sendsHang) {
      return new Promise<string>((_resolve, reject) => this.#hung.push(reject));
    }
    this.sent.push({ channelId, message });
    return String(this.sent.length);
  }

  async edit(): Promise<void> {}
  async answerButton(): Promise<void> {}
  async typing(): Promise<void> {}

  failure(): PlatformFailure {
    return { kind: "refused" };
  }

  redact(text: string): string {
    return text;
  }
}
