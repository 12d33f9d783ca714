import { clock, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import type { Disposition, MessageState, StoredMessage } from "./types.js";

/** A rendered stored message that later events (state, reply text) update in place. */
export interface MessageView {
  element: HTMLElement;
  update(message: Partial<StoredMessage>, disposition?: Disposition): void;
  /** A short remark shown after the text, such as when a deferred message is retried. */
  note(text: string): void;
}

interface Label {
  text: string;
  title: string;
  tone: "steer" | "one-shot" | "deferred" | "failed" | "fallback" | "error";
}

/** What the page says about how a user message was routed. */
export function routingLabel(
  disposition: Disposition | undefined,
  state: MessageState | null | undefined,
): Label | null {
  if (disposition === "steered" || state === "steered") {
    return {
      text: "steering the turn",
      title: "Sent while the agent was working: delivered into the running turn.",
      tone: "steer",
    };
  }
  if (disposition === "one_shot") {
    return {
      text: "one-shot",
      title: "Every agent process was busy, so a one-shot process answered this message.",
      tone: "one-shot",
    };
  }
  if (disposition === "waiting") {
    return {
      text: "waiting",
      title: "Every agent process is busy: the message is kept and answered in its turn.",
      tone: "deferred",
    };
  }
  if (disposition === "deferred" || state === "deferred") {
    return {
      text: "deferred",
      title: "Rate limited: the message is kept and retried automatically.",
      tone: "deferred",
    };
  }
  if (state === "failed")
    return { text: "failed", title: "No answer: see the error.", tone: "failed" };
  return null;
}

const authors: Record<StoredMessage["kind"], string> = {
  user: "you",
  reply: "assistant",
  fallback: "gateway",
  error: "gateway",
  compaction: "gateway",
  reset: "gateway",
};

/**
 * Who sent a user message, from its stored source: you (the page or the API), `rudder send`,
 * a schedule, or a chat platform's person by name.
 */
export function authorOf(message: StoredMessage): { name: string; title: string } {
  const source = message.source ?? "http";
  if (message.kind !== "user") return { name: authors[message.kind], title: "" };
  if (source === "http") return { name: "you", title: "Sent from the page or the HTTP API" };
  if (source === "cli") return { name: "you, by rudder send", title: "Sent with rudder send" };
  const [kind = "", ...rest] = source.split(":");
  if (kind === "schedule") return { name: "schedule", title: `Sent by schedule ${rest.join(":")}` };
  const platform = kind.charAt(0).toUpperCase() + kind.slice(1);
  const [user = "", ...name] = rest;
  const person = name.join(":");
  if (person !== "") return { name: `${person} (${platform})`, title: `${platform} user ${user}` };
  return { name: user === "" ? platform : `${platform} user ${user}`, title: source };
}

/** Kinds shown as a line across the conversation rather than as a message. */
export function isDivider(kind: StoredMessage["kind"]): boolean {
  return kind === "compaction" || kind === "reset";
}

/** What a person can do with a message: send a failed one again. */
export interface MessageActions {
  retry?: (text: string) => void;
  /** The files the agent sent with a reply, shown under it (null: none). */
  files?: (message: StoredMessage) => HTMLElement | null;
}

export function messageView(
  message: StoredMessage,
  disposition?: Disposition,
  actions: MessageActions = {},
): MessageView {
  const label = h("span", { class: "badge", "data-testid": "message-label", hidden: true });
  const state = h("span", { class: "message-state", "data-testid": "message-state" });
  const time = h("time", { class: "message-time" });
  const text = h("div", {
    class: `message-text${message.kind === "reply" ? " markdown" : ""}`,
    "data-testid": "message-text",
  });
  const remark = h("p", { class: "message-note", "data-testid": "message-note", hidden: true });
  const retry = h(
    "button",
    { type: "button", class: "small retry", "data-testid": "message-retry", hidden: true },
    "Retry",
  );
  if (isDivider(message.kind)) return dividerView(message);
  const element = h(
    "article",
    {
      class: `message message-${message.kind}`,
      "data-testid": "message",
      "data-kind": message.kind,
      "data-role": message.role,
    },
    h(
      "header",
      {},
      h(
        "span",
        {
          class: "author",
          "data-testid": "message-author",
          title: authorOf(message).title,
        },
        authorOf(message).name,
      ),
      time,
      label,
      state,
    ),
    text,
    remark,
    retry,
  );
  const current: StoredMessage = { ...message };
  // Shown once known: a message sent from this page learns its attachments as it is stored.
  let files: HTMLElement | null = null;
  const showFiles = () => {
    files ??= actions.files?.(current) ?? null;
    if (files && files.parentNode === null) text.after(files);
  };
  showFiles();
  let currentDisposition = disposition;
  retry.addEventListener("click", () => {
    retry.disabled = true;
    actions.retry?.(current.text);
  });

  function render(): void {
    element.dataset.messageId = current.id;
    element.dataset.state = current.state ?? "";
    element.dataset.disposition = currentDisposition ?? "";
    if (current.kind === "reply") renderMarkdown(text, current.text);
    else text.textContent = current.text;
    time.textContent = clock(current.createdAt);
    if (current.createdAt) time.dateTime = current.createdAt;
    const routing =
      current.kind === "user"
        ? routingLabel(currentDisposition, current.state)
        : current.kind === "fallback" || current.kind === "error"
          ? {
              text: current.kind,
              title: current.kind === "fallback" ? "A local reply" : "",
              tone: current.kind,
            }
          : null;
    label.hidden = routing === null;
    label.textContent = routing?.text ?? "";
    label.title = routing?.title ?? "";
    label.dataset.tone = routing?.tone ?? "";
    // The state is shown unless the label already says it ("deferred", "failed").
    const stateText = current.kind === "user" ? (current.state ?? "") : "";
    state.textContent = stateText === routing?.text ? "" : stateText;
    retry.hidden = !(actions.retry && current.kind === "user" && current.state === "failed");
  }
  render();
  return {
    element,
    update(next, nextDisposition) {
      Object.assign(current, next);
      showFiles();
      // A steered message stays labelled as steering after it is answered.
      if (nextDisposition) currentDisposition = nextDisposition;
      else if (next.state === "steered") currentDisposition = "steered";
      render();
    },
    note(value) {
      remark.textContent = value;
      remark.hidden = value === "";
    },
  };
}

/** Where the agent's context was compacted or a new conversation began. */
function dividerView(message: StoredMessage): MessageView {
  const text = h("span", { class: "divider-text", "data-testid": "divider-text" });
  const element = h(
    "div",
    {
      class: `divider divider-${message.kind}`,
      role: "separator",
      "data-testid": "divider",
      "data-kind": message.kind,
      "data-message-id": message.id,
    },
    text,
  );
  const current: StoredMessage = { ...message };
  const render = () => {
    if (current.kind === "reply") renderMarkdown(text, current.text);
    else text.textContent = current.text;
    element.title = clock(current.createdAt);
  };
  render();
  return {
    element,
    update(next) {
      Object.assign(current, next);
      render();
    },
    note() {},
  };
}

/** A user message shown before the gateway has answered the POST. */
export function pendingMessage(id: string, text: string): StoredMessage {
  return {
    id,
    channelId: "",
    role: "user",
    text,
    state: null,
    replyTo: null,
    kind: "user",
    createdAt: new Date().toISOString(),
  };
}
