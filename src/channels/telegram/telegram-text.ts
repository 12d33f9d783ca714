import type {
  GatewayEvent,
  PermissionRequestInfo,
  PermissionVerdict,
} from "../../gateway/events.js";

/** What one `sendMessage` may carry, in UTF-16 code units (Telegram counts them so). */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/**
 * Cuts `text` into parts of at most `limit` characters: after the last line
 * break that fits, else after the last space, else at the limit (never inside
 * a surrogate pair). The break a part ends on is dropped, so joining the parts
 * with "\n" (or " ") gives the text back. Empty text is one empty part.
 */
export function splitMessage(text: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    let cut = window.lastIndexOf("\n");
    if (cut <= 0) cut = window.lastIndexOf(" ");
    if (cut <= 0) {
      cut = limit;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    } else {
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut + 1);
    }
  }
  parts.push(rest);
  return parts;
}

export interface ChatCommand {
  /** Lower case, without the slash. */
  name: string;
  /** The bot a group command is addressed to (`/help@some_bot`), if any. */
  bot: string | undefined;
  args: string;
}

/**
 * A bot command as Telegram marks one: `/name` or `/name@bot` at the start,
 * then whitespace or the end. `/tmp/x is full` is a message, not a command.
 */
export function parseCommand(text: string): ChatCommand | null {
  const match = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{1,64}))?(?:\s+([\s\S]*))?$/.exec(
    text.trim(),
  );
  if (!match) return null;
  return { name: (match[1] as string).toLowerCase(), bot: match[2], args: match[3]?.trim() ?? "" };
}

export const HELP_TEXT = [
  "This chat talks to a coding agent run by rudder. Write a message and the agent's reply comes back here; a message sent while it works joins what it is doing.",
  "",
  "When the agent asks for permission (to delete a file, say), answer with",
  "/allow <id>  or  /deny <id> [what to tell the agent]",
  "",
  "/compact [what to keep]  shrinks the agent's memory of this chat to a summary.",
  "/clear  starts a new conversation (the old one is kept on disk).",
  "/help  shows this text.",
].join("\n");

export function unknownCommandText(name: string): string {
  return `Unknown command /${name}. Commands: /help, /allow <id>, /deny <id> [note], /compact [focus], /clear. Anything that is not a command goes to the agent.`;
}

export function refusalText(userId: string | undefined, chatId: string): string {
  const who = userId === undefined ? `this chat's id is ${chatId}` : `your user id is ${userId}`;
  return `Not allowed: this bot answers only the Telegram ids on its allow-list; ${who}${
    userId !== undefined && userId !== chatId ? ` (chat ${chatId})` : ""
  }. The owner can add it with --telegram-allow.`;
}

/** The part of a request id people type: its first eight characters. */
export function shortId(requestId: string): string {
  return requestId.slice(0, 8);
}

/** "wants to run: rm notes.txt", as the page's cards say it. */
function wants(request: PermissionRequestInfo): string {
  const tool = request.toolName.toLowerCase();
  const verb =
    tool === "bash"
      ? "run"
      : /^(write|edit|multiedit|notebookedit|write_file|edit_file)$/.test(tool)
        ? "change"
        : /^(read|glob|grep|ls|read_file)$/.test(tool)
          ? "read"
          : "use";
  const input = request.input;
  const what =
    typeof input.command === "string"
      ? input.command
      : typeof input.path === "string"
        ? input.path
        : typeof input.file_path === "string"
          ? input.file_path
          : JSON.stringify(input);
  return `wants to ${verb} (${request.toolName}): ${what}`;
}

export function permissionRequestText(request: PermissionRequestInfo): string {
  const id = shortId(request.id);
  return [
    `Permission request ${id}: the agent ${wants(request)}`,
    ...(request.description ? [`Reason: ${request.description}`] : []),
    `Answer /allow ${id} or /deny ${id} [what to tell the agent]`,
  ].join("\n");
}

/** A settled request, however it was settled: here, on the page, by the timeout or the turn's end. */
export function permissionResolvedText(
  requestId: string,
  decision: PermissionVerdict,
  message: string | undefined,
): string {
  const id = shortId(requestId);
  if (decision === "allow") return `Permission request ${id}: allowed.`;
  return `Permission request ${id}: ${message ?? "denied."}`;
}

/** What a channel event says in the chat, or null for events the chat does not show. */
export function outboundText(event: GatewayEvent): string | null {
  switch (event.type) {
    case "reply":
    case "fallback":
    case "error":
    case "notice":
      return event.message.text;
    case "permission_request":
      return permissionRequestText(event.request);
    case "permission_resolved":
      return permissionResolvedText(event.requestId, event.decision, event.message);
    default:
      return null;
  }
}
