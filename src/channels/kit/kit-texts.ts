/** What the kit says in a chat in its own words: help, pairing, acknowledgements. */
import type { Disposition } from "../../gateway/events.js";

/** The command menu every source publishes (Telegram's `setMyCommands`). */
export const MENU_COMMANDS = [
  { command: "status", description: "What the agent is doing, its context and spend" },
  { command: "stop", description: "Interrupt the running turn" },
  { command: "compact", description: "Shrink the conversation to a summary" },
  { command: "clear", description: "Start a new conversation" },
  { command: "model", description: "Show or switch the model" },
  { command: "help", description: "What this bot does" },
];

export const HELP_TEXT = [
  "This chat talks to a coding agent run by rudder. Write a message and the agent's reply comes back here; a message sent while it works joins what it is doing.",
  "",
  "When the agent asks for permission (to delete a file, say), press a button on its request, or answer",
  "/allow <id>  or  /deny <id> [what to tell the agent]",
  "",
  "/status  what the agent is doing.",
  "/stop  interrupts the running turn.",
  "/compact [what to keep]  shrinks the agent's memory of this chat to a summary.",
  "/clear  starts a new conversation (the old one is kept on disk).",
  "/model [name]  shows or switches the model.",
  "/pair <CODE>  lets in the person who was given that pairing code.",
  "/help  shows this text.",
].join("\n");

export function unknownCommandText(name: string): string {
  return `Unknown command /${name}. Commands: /help, /status, /stop, /allow <id>, /deny <id> [note], /compact [focus], /clear, /model. Anything that is not a command goes to the agent.`;
}

export function unavailableCommandText(name: string): string {
  return `/${name} is not available on this gateway yet.`;
}

export function pairingText(
  source: string,
  userId: string | undefined,
  chatId: string,
  code: string | null,
): string {
  const who = userId === undefined ? `this chat's id is ${chatId}` : `your user id is ${userId}`;
  const where = userId !== undefined && userId !== chatId ? ` (chat ${chatId})` : "";
  const head = `Not allowed yet: this bot answers only the people its owner let in; ${who}${where}.`;
  if (code === null) {
    return `${head} Too many people are waiting to be let in; try again in an hour. The owner can also add you with --${source}-allow.`;
  }
  return `${head} To be let in, give the owner this pairing code: ${code} (good for an hour). They approve it on the gateway's page, with \`rudder pairing approve ${source} ${code}\`, or by sending /pair ${code} in an allowed chat.`;
}

/** The acknowledgement of a message that arrived while the agent works; null for none. */
export function acknowledgementText(disposition: Disposition | string): string | null {
  switch (disposition) {
    case "steered":
      return "Added to what the agent is doing now.";
    case "queued":
      return "Waits: a command (a compaction) runs first; it goes to the agent after.";
    case "deferred":
      return "Waits: the model is rate-limited now; the agent answers when it is back.";
    case "waiting":
      return "Waits: every agent is busy; it is answered in turn.";
    case "budget":
    case "over_budget":
      return "Waits: this channel has spent its budget; it is answered when the budget allows.";
    default:
      return null;
  }
}

/** The emoji of an acknowledgement, where a platform reacts instead: seen, or waiting. */
export function acknowledgementReaction(disposition: Disposition | string): string {
  return disposition === "steered" ? "\u{1F440}" : "\u{23F3}";
}
