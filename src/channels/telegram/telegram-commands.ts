import type { SourceContext } from "../../gateway/channel-source.js";
import { type ChatCommand, HELP_TEXT, shortId, unknownCommandText } from "./telegram-text.js";

/**
 * What to answer a command in a chat: help for `/start` and `/help`, a
 * permission decision for `/allow` and `/deny`, a pointer to `/help` for
 * anything else. Null when nothing is to be said: a command addressed to
 * another bot in a group, or a request settled (its resolution is announced).
 */
export async function answerCommand(
  command: ChatCommand,
  botName: string | undefined,
  permissions: SourceContext["permissions"],
  channelId: string,
): Promise<string | null> {
  if (command.bot !== undefined && botName && command.bot.toLowerCase() !== botName.toLowerCase()) {
    return null;
  }
  if (command.name === "allow" || command.name === "deny") {
    return answerPermissionCommand(permissions, channelId, command.name, command.args);
  }
  if (command.name === "start" || command.name === "help") return HELP_TEXT;
  return unknownCommandText(command.name);
}

/**
 * Carries out `/allow <id>` or `/deny <id> [note]` in a chat. The id is a
 * request's id or its start (the eight characters the announcement shows);
 * with one request waiting, it may be left out (`/deny not now` denies it
 * with the note "not now"). Returns what to answer in the
 * chat, or null when the request was settled: its `permission_resolved`
 * event then says so, as it does for a decision made on the page.
 */
export async function answerPermissionCommand(
  permissions: SourceContext["permissions"],
  channelId: string,
  verb: "allow" | "deny",
  args: string,
): Promise<string | null> {
  const words = args.split(/\s+/).filter((word) => word !== "");
  const pending = await permissions.list(channelId);
  // "/deny not that one" with one request waiting: all of it is the note.
  if (pending.length === 1 && words[0] !== undefined && !/^[0-9a-f-]{4,}$/i.test(words[0])) {
    words.unshift("");
  }
  const [given = "", ...rest] = words;
  const note = rest.join(" ");
  let requestId: string;
  if (given === "") {
    if (pending.length === 0) return "No permission request is waiting in this chat.";
    if (pending.length > 1) {
      const ids = pending.map((request) => shortId(request.id)).join(", ");
      return `Several permission requests are waiting (${ids}); say which: /${verb} <id>`;
    }
    requestId = (pending[0] as { id: string }).id;
  } else {
    const matches = pending.filter((request) => request.id.startsWith(given.toLowerCase()));
    if (matches.length > 1) return `More than one request starts with ${given}; give more of it.`;
    requestId = matches[0]?.id ?? given;
  }
  const outcome = await permissions.decide(
    channelId,
    requestId,
    verb,
    verb === "deny" && note !== "" ? note : undefined,
  );
  if (outcome.status === "decided") return null;
  if (outcome.status === "already_decided") {
    return `Permission request ${shortId(requestId)} was already ${outcome.decision === "allow" ? "allowed" : "denied"}.`;
  }
  if (outcome.status === "owner_gone") {
    return `Permission request ${shortId(requestId)} was asked on a gateway worker that is gone; nobody waits for the answer.`;
  }
  return `No permission request ${given} is waiting in this chat (answered already, timed out, or its turn ended).`;
}
