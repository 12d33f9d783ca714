/**
 * The Discord source's configuration for `rudder serve`: the bot token from
 * `--discord-token-file`, else the configuration's `discord.tokenFile` or `discord.token`, else
 * `RUDDER_DISCORD_TOKEN`; who may talk from `--discord-allow`, else `discord.allow`, else
 * `RUDDER_DISCORD_ALLOW` (user, channel or `role:<id>` ids); the REST base URL from
 * `RUDDER_DISCORD_API_URL` (tests). Null when no token is given (no Discord); an Error with
 * a one-line message when something is malformed. Messages never contain the token.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { ChannelSource } from "../../gateway/channel-source.js";

export interface DiscordConfig {
  token: string;
  allow: string[];
  apiUrl?: string;
}

export interface DiscordSettings {
  tokenFile?: string | undefined;
  allow?: string | undefined;
  /** The configuration file's `discord` section. */
  section?: Record<string, unknown> | undefined;
  env: NodeJS.ProcessEnv;
}

const SECTION_KEYS = new Set(["token", "tokenFile", "allow"]);

function readToken(file: string, what: string): string | Error {
  let token: string;
  try {
    token = readFileSync(file, "utf8").trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    return new Error(`cannot read ${what} ${file} (${code})`);
  }
  return token === "" ? new Error(`${what} ${file} is empty`) : token;
}

function sectionToken(section: Record<string, unknown>): string | undefined | Error {
  const { token, tokenFile } = section;
  if (tokenFile !== undefined) {
    if (typeof tokenFile !== "string") return new Error('"discord.tokenFile" must be a file name');
    return readToken(tokenFile, '"discord.tokenFile"');
  }
  if (token === undefined) return undefined;
  if (typeof token !== "string" || token.trim() === "") {
    return new Error('"discord.token" must be the bot token');
  }
  return token.trim();
}

function allowList(settings: DiscordSettings): string[] | Error {
  const fromSection = settings.section?.allow;
  let entries: string[];
  if (settings.allow !== undefined) entries = settings.allow.split(",");
  else if (fromSection !== undefined) {
    if (!Array.isArray(fromSection) || fromSection.some((id) => typeof id !== "string")) {
      return new Error('"discord.allow" must be an array of ids (user, channel or "role:<id>")');
    }
    entries = fromSection as string[];
  } else entries = (settings.env.RUDDER_DISCORD_ALLOW ?? "").split(",");
  const allow = entries.map((id) => id.trim()).filter((id) => id !== "");
  const bad = allow.find((id) => !/^(role:)?\d{1,20}$/.test(id));
  if (bad !== undefined) {
    return new Error(`Discord allow-lists take ids: users, channels or role:<id> (got "${bad}")`);
  }
  return [...new Set(allow)];
}

export function discordConfig(settings: DiscordSettings): DiscordConfig | null | Error {
  const { env, section } = settings;
  const unknown = Object.keys(section ?? {}).find((key) => !SECTION_KEYS.has(key));
  if (unknown !== undefined) {
    return new Error(`unknown key "discord.${unknown}" (known: token, tokenFile, allow)`);
  }
  let token: string | undefined | Error;
  if (settings.tokenFile !== undefined)
    token = readToken(settings.tokenFile, "--discord-token-file");
  else if (section !== undefined) token = sectionToken(section);
  if (token === undefined && env.RUDDER_DISCORD_TOKEN?.trim()) {
    token = env.RUDDER_DISCORD_TOKEN.trim();
  }
  if (token instanceof Error) return token;
  if (token === undefined) {
    return settings.allow === undefined
      ? null
      : new Error("--discord-allow needs a bot token: --discord-token-file FILE");
  }
  // Bot tokens are three base64url parts joined by dots; anything else is not one.
  if (!/^[A-Za-z0-9._-]+$/.test(token)) {
    return new Error(
      "the Discord bot token should look like MTk4...Xyz.Gh1..., from the Developer Portal's Bot page",
    );
  }
  const allow = allowList(settings);
  if (allow instanceof Error) return allow;
  const apiUrl = env.RUDDER_DISCORD_API_URL?.trim();
  if (apiUrl) {
    let parsed: URL;
    try {
      parsed = new URL(apiUrl);
    } catch {
      return new Error(`RUDDER_DISCORD_API_URL is not a URL (got "${apiUrl}")`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      return new Error(`RUDDER_DISCORD_API_URL must be http or https (got "${apiUrl}")`);
    }
  }
  return { token, allow, ...(apiUrl ? { apiUrl } : {}) };
}

/**
 * `rudder serve`'s Discord source from its flags, configuration section and environment:
 * undefined without a token, an Error to print; the source's code (and discord.js) is loaded
 * only when there is one.
 */
export async function discordSource(
  flags: { tokenFile: string | undefined; allow: string | undefined },
  section: { values: Record<string, unknown>; folder: string } | undefined,
  env: NodeJS.ProcessEnv,
  logger: (line: string) => void,
): Promise<ChannelSource | undefined | Error> {
  const values = section?.values;
  // A token file named in the configuration is found from the configuration's folder.
  const resolved =
    section && values && typeof values.tokenFile === "string"
      ? { ...values, tokenFile: resolve(section.folder, values.tokenFile) }
      : values;
  const config = discordConfig({ ...flags, section: resolved, env });
  if (config === null || config instanceof Error) return config ?? undefined;
  const { DiscordChannelSource } = await import("./discord-source.js");
  return new DiscordChannelSource({ ...config, logger });
}
