import { readFileSync } from "node:fs";

/** What `rudder serve` needs to start the Telegram source. */
export interface TelegramConfig {
  token: string;
  allow: string[];
  apiUrl?: string;
}

export interface TelegramSettings {
  /** `--telegram-token-file`: a file whose only content is the bot token. */
  tokenFile?: string | undefined;
  /** `--telegram-allow`: comma-separated user or chat ids. */
  allow?: string | undefined;
  env: NodeJS.ProcessEnv;
}

/**
 * The Telegram source's configuration from flags, else the environment
 * (`RUDDER_TELEGRAM_TOKEN`, `RUDDER_TELEGRAM_ALLOW`, `RUDDER_TELEGRAM_API_URL`):
 * null when no token is given (no Telegram), an Error with a one-line
 * message when the configuration is incomplete or malformed. Without an
 * allow-list the source starts in pairing mode: a stranger gets a code the owner
 * approves. Error messages never contain the token.
 */
export function telegramConfig(settings: TelegramSettings): TelegramConfig | null | Error {
  const { env } = settings;
  let token: string | undefined;
  if (settings.tokenFile !== undefined) {
    try {
      token = readFileSync(settings.tokenFile, "utf8").trim();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
      return new Error(`cannot read --telegram-token-file ${settings.tokenFile} (${code})`);
    }
    if (token === "") return new Error(`--telegram-token-file ${settings.tokenFile} is empty`);
  } else if (env.RUDDER_TELEGRAM_TOKEN?.trim()) {
    token = env.RUDDER_TELEGRAM_TOKEN.trim();
  }
  if (token === undefined) {
    return settings.allow === undefined
      ? null
      : new Error("--telegram-allow needs a bot token: --telegram-token-file FILE");
  }
  // Tokens look like 123456:ABC-def_ghi; anything else would not survive in the API's URL path.
  if (!/^[A-Za-z0-9:_-]+$/.test(token)) {
    return new Error("the Telegram bot token should look like 123456:ABC-def (from @BotFather)");
  }

  const rawAllow = settings.allow ?? env.RUDDER_TELEGRAM_ALLOW ?? "";
  const allow = rawAllow
    .split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  const bad = allow.find((id) => !/^-?\d{1,20}$/.test(id));
  if (bad !== undefined) {
    return new Error(`--telegram-allow takes numeric Telegram ids (got "${bad}")`);
  }

  const apiUrl = env.RUDDER_TELEGRAM_API_URL?.trim();
  if (apiUrl) {
    let parsed: URL;
    try {
      parsed = new URL(apiUrl);
    } catch {
      return new Error(`RUDDER_TELEGRAM_API_URL is not a URL (got "${apiUrl}")`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      return new Error(`RUDDER_TELEGRAM_API_URL must be http or https (got "${apiUrl}")`);
    }
  }
  return { token, allow: [...new Set(allow)], ...(apiUrl ? { apiUrl } : {}) };
}

/** What the configuration file's `telegram` section may hold; read when the gateway starts. */
export interface TelegramSection {
  /** In groups: answer only when mentioned, replied to or commanded (default), or every message. */
  groups?: "mention" | "all";
}

/**
 * Checks the `telegram` section of the gateway's configuration file: an unknown key or a wrong
 * value is an Error naming it (`telegram.groups must be "mention" or "all"`).
 */
export function telegramSection(
  section: Record<string, unknown> | undefined,
): TelegramSection | Error {
  if (section === undefined) return {};
  const unknown = Object.keys(section).find((key) => key !== "groups");
  if (unknown !== undefined) return new Error(`telegram.${unknown} is not a known key`);
  const { groups } = section;
  if (groups === undefined) return {};
  if (groups !== "mention" && groups !== "all") {
    return new Error('telegram.groups must be "mention" or "all"');
  }
  return { groups };
}
