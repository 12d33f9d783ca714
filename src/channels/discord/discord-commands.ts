/**
 * The kit's command menu as Discord slash commands, registered per guild (they appear at
 * once, where global commands take up to an hour): `/model` takes an optional model name,
 * `/compact` what to keep; the rest take nothing.
 */

/** Discord's types: a chat-input command, a string option. */
const CHAT_INPUT = 1;
const STRING_OPTION = 3;

const OPTIONS: Record<string, { name: string; description: string }> = {
  model: { name: "name", description: "The model to switch to" },
  compact: { name: "focus", description: "What the summary should keep" },
};

export interface GuildCommand {
  name: string;
  description: string;
  type: number;
  options: Array<{ type: number; name: string; description: string; required: boolean }>;
}

export function guildCommands(
  commands: ReadonlyArray<{ command: string; description: string }>,
): GuildCommand[] {
  return commands.map(({ command, description }) => {
    const option = OPTIONS[command];
    return {
      name: command,
      description: description.slice(0, 100),
      type: CHAT_INPUT,
      options: option ? [{ type: STRING_OPTION, ...option, required: false }] : [],
    };
  });
}
