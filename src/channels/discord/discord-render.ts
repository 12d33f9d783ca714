/**
 * A kit message as Discord's message body: markdown goes as it is (Discord renders the
 * agent's markdown: emphasis, code, fences, lists, quotes, headings, links), plain text (the
 * kit's own words, people's names) with Discord's markdown characters escaped; buttons as
 * action rows of at most five; a reply as a `message_reference` that does not fail when the
 * message is gone; and no mention ever pings (`allowed_mentions` empty), whatever the agent
 * wrote (`@everyone`, `<@id>`).
 */
import type { OutgoingChat } from "../kit/chat-platform.js";

/** What one message may carry (characters). */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** Discord's style of a grey button, and the most buttons in a row. */
const SECONDARY_STYLE = 2;
const BUTTONS_PER_ROW = 5;

/** Escapes what Discord would read as markdown: `*_~|\``, `\\`, and `#`, `>`, `-` opening a line. */
export function escapeDiscordMarkdown(text: string): string {
  return text
    .replace(/[\\*_~`|[\]]/g, (character) => `\\${character}`)
    .replace(/^([#>-])/gm, "\\$1");
}

export interface DiscordMessageBody {
  content: string;
  components?: Array<{
    type: 1;
    components: Array<{ type: 2; style: number; label: string; custom_id: string }>;
  }>;
  allowed_mentions: { parse: never[]; replied_user: boolean };
  message_reference?: { message_id: string; fail_if_not_exists: boolean };
}

export function renderMessage(message: OutgoingChat): DiscordMessageBody {
  let content = message.text;
  if (message.format === "plain") {
    const escaped = escapeDiscordMarkdown(message.text);
    // Escaping lengthens: past the limit the text goes as it is rather than refused.
    content = escaped.length <= DISCORD_MESSAGE_LIMIT ? escaped : message.text;
  }
  const body: DiscordMessageBody = {
    content,
    allowed_mentions: { parse: [], replied_user: false },
  };
  if (message.buttons !== undefined) {
    body.components = message.buttons
      .flatMap((row) => chunk(row, BUTTONS_PER_ROW))
      .map((row) => ({
        type: 1 as const,
        components: row.map((button) => ({
          type: 2 as const,
          style: SECONDARY_STYLE,
          label: button.label.slice(0, 80),
          custom_id: button.data,
        })),
      }));
  }
  if (message.replyTo !== undefined) {
    body.message_reference = { message_id: message.replyTo, fail_if_not_exists: false };
  }
  return body;
}

function chunk<T>(items: T[], size: number): T[][] {
  const rows: T[][] = [];
  for (let index = 0; index < items.length; index += size) {
    rows.push(items.slice(index, index + size));
  }
  return rows;
}
