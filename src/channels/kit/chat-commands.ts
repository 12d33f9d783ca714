import type { SourceContext } from "../../gateway/channel-source.js";
import type { ApprovalCards } from "./approval-cards.js";
import type { ChatAccess } from "./chat-access.js";
import type { IncomingChat } from "./chat-platform.js";
import { HELP_TEXT, unavailableCommandText, unknownCommandText } from "./kit-texts.js";
import { answerPermissionCommand } from "./permission-commands.js";

export interface ChatCommand {
  /** Lower case, without the slash. */
  name: string;
  /** The bot a group command is addressed to (`/help@some_bot`), if any. */
  bot: string | undefined;
  args: string;
}

/**
 * A bot command as chat platforms mark one: `/name` or `/name@bot` at the start,
 * then whitespace or the end. `/tmp/x is full` is a message, not a command.
 */
export function parseCommand(text: string): ChatCommand | null {
  const match = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{1,64}))?(?:\s+([\s\S]*))?$/.exec(
    text.trim(),
  );
  if (!match) return null;
  return { name: (match[1] as string).toLowerCase(), bot: match[2], args: match[3]?.trim() ?? "" };
}

export interface CommandParts {
  botName: string | undefined;
  context: SourceContext;
  access: ChatAccess;
  approvals: ApprovalCards;
}

/**
 * What to answer a command the gateway does not carry out itself (those, such as `/compact`,
 * `/status` and `/model <name>`, are delivered to the channel): help, a permission decision,
 * `/stop`, `/pair CODE`, how to write `/status` or `/model` given words they do not take, or a
 * pointer to `/help`. Null when nothing is to be said: a command for another bot, or a
 * request settled (its card says so).
 */
export async function answerChatCommand(
  command: ChatCommand,
  message: IncomingChat,
  parts: CommandParts,
): Promise<string | null> {
  const { botName, context } = parts;
  if (command.bot !== undefined && botName && command.bot.toLowerCase() !== botName.toLowerCase()) {
    return null;
  }
  const { channelId } = message;
  switch (command.name) {
    case "allow":
    case "deny":
      return answerPermissionCommand(
        context.permissions,
        channelId,
        command.name,
        command.args,
        (id) => parts.approvals.deciding(id, message.userName),
      );
    case "start":
    case "help":
      return HELP_TEXT;
    case "stop": {
      if (!context.interrupt) return unavailableCommandText("stop");
      const stopped = await context.interrupt(channelId);
      return stopped ? "Stopped the running turn." : "Nothing is running in this chat.";
    }
    case "pair": {
      const code = command.args.split(/\s+/)[0] ?? "";
      if (code === "") return "Give the code: /pair <CODE>";
      const approved = await parts.access.approve(code, message.userName);
      return approved === null
        ? `No pairing code ${code} is waiting (expired, or approved already).`
        : `Let in ${approved.name} (user ${approved.userId}).`;
    }
    // The gateway carries out `/status` and `/model [name]` (delivered to the channel): what
    // reaches here is one of them with arguments it does not take.
    case "status":
      return "/status takes nothing after it: send /status alone.";
    case "model":
      return "/model takes one model name: /model <name> switches this chat's model, /model alone says which it uses.";
    default:
      return unknownCommandText(command.name);
  }
}
