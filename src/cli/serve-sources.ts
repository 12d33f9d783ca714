/**
 * `rudder serve`'s chat sources from its flags, configuration and environment: Telegram,
 * Slack and Discord, each only when its token is given; an Error with one line when one is
 * misconfigured. Discord's code (and discord.js) is loaded only when it has a token.
 */
import { discordSource } from "../channels/discord/discord-config.js";
import { slackConfig } from "../channels/slack/slack-config.js";
import { SlackChannelSource } from "../channels/slack/slack-source.js";
import { telegramConfig, telegramSection } from "../channels/telegram/telegram-config.js";
import { TelegramChannelSource } from "../channels/telegram/telegram-source.js";
import type { ChannelSource } from "../gateway/index.js";
import { type ParsedArgs, stringFlag } from "./args.js";
import type { ServeConfig } from "./serve-config.js";

export async function serveSources(
  args: ParsedArgs,
  config: ServeConfig,
  options: { env: NodeJS.ProcessEnv; dataDir: string; logger: (line: string) => void },
): Promise<ChannelSource[] | Error> {
  const { env, dataDir, logger } = options;
  const telegram = telegramConfig({
    tokenFile: stringFlag(args, "telegram-token-file"),
    allow: stringFlag(args, "telegram-allow"),
    env,
  });
  if (telegram instanceof Error) return telegram;
  const telegramOptions = telegramSection(config.sourceSection("telegram")?.values);
  if (telegramOptions instanceof Error) {
    return new Error(`the configuration's ${telegramOptions.message}`);
  }
  const slack = slackConfig({
    appTokenFile: stringFlag(args, "slack-app-token-file"),
    botTokenFile: stringFlag(args, "slack-bot-token-file"),
    allow: stringFlag(args, "slack-allow"),
    section: config.sourceSection("slack"),
    env,
  });
  if (slack instanceof Error) return slack;
  const discord = await discordSource(
    { tokenFile: stringFlag(args, "discord-token-file"), allow: stringFlag(args, "discord-allow") },
    config.sourceSection("discord"),
    env,
    logger,
  );
  if (discord instanceof Error) return discord;
  return [
    ...(telegram
      ? [new TelegramChannelSource({ stateDir: dataDir, ...telegram, ...telegramOptions, logger })]
      : []),
    ...(slack ? [new SlackChannelSource({ ...slack, logger })] : []),
    ...(discord ? [discord] : []),
  ];
}
