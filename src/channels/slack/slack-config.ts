/**
 * The Slack source's configuration for `rudder serve`: the flags (`--slack-app-token-file`,
 * `--slack-bot-token-file`, `--slack-allow`), else the configuration file's `slack` section
 * (`appTokenFile`, `botTokenFile`, `allow`, `groups`, `signingSecretFile`), else the environment
 * (`RUDDER_SLACK_APP_TOKEN`, `RUDDER_SLACK_BOT_TOKEN`, `RUDDER_SLACK_ALLOW`,
 * `RUDDER_SLACK_SIGNING_SECRET`, `RUDDER_SLACK_API_URL`). Null when no bot token is given (no
 * Slack); an Error with a one-line message, never holding a token, when it is incomplete or
 * malformed. Without an allow-list the source starts in pairing mode.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export interface SlackConfig {
  botToken: string;
  /** Socket Mode; absent when events come only over HTTP (then `signingSecret` is needed). */
  appToken?: string;
  /** The Events API's signing secret, for `POST /slack/events`. */
  signingSecret?: string;
  allow: string[];
  groups?: "mention" | "all";
  apiUrl?: string;
}

export interface SlackSettings {
  appTokenFile?: string | undefined;
  botTokenFile?: string | undefined;
  /** `--slack-allow`: comma-separated user or channel ids. */
  allow?: string | undefined;
  /** The configuration file's `slack` section, as parsed, and the folder its paths start from. */
  section?: { values: Record<string, unknown>; folder: string } | undefined;
  env: NodeJS.ProcessEnv;
}

export function slackConfig(settings: SlackSettings): SlackConfig | null | Error {
  const { env } = settings;
  const section = settings.section?.values ?? {};
  const folder = settings.section?.folder ?? ".";
  const bad = unknownKey(section);
  if (bad !== undefined) return new Error(`the configuration's slack section has no "${bad}"`);
  const botToken = secret(
    folder,
    "bot token",
    settings.botTokenFile,
    "--slack-bot-token-file",
    section.botTokenFile,
    env.RUDDER_SLACK_BOT_TOKEN,
  );
  if (botToken instanceof Error) return botToken;
  const appToken = secret(
    folder,
    "app token",
    settings.appTokenFile,
    "--slack-app-token-file",
    section.appTokenFile,
    env.RUDDER_SLACK_APP_TOKEN,
  );
  if (appToken instanceof Error) return appToken;
  const signingSecret = secret(
    folder,
    "signing secret",
    undefined,
    "",
    section.signingSecretFile,
    env.RUDDER_SLACK_SIGNING_SECRET,
  );
  if (signingSecret instanceof Error) return signingSecret;
  if (botToken === undefined) {
    return appToken === undefined && settings.allow === undefined
      ? null
      : new Error("Slack needs a bot token: --slack-bot-token-file FILE (xoxb-...)");
  }
  if (!botToken.startsWith("xoxb-"))
    return new Error("the Slack bot token should start with xoxb-");
  if (appToken !== undefined && !appToken.startsWith("xapp-")) {
    return new Error("the Slack app token should start with xapp- (Socket Mode's app-level token)");
  }
  if (appToken === undefined && signingSecret === undefined) {
    return new Error(
      "Slack needs an app token for Socket Mode (--slack-app-token-file FILE, xapp-...) or a signing secret for the Events API (slack.signingSecretFile)",
    );
  }
  const allow = allowList(settings.allow ?? listOf(section.allow) ?? env.RUDDER_SLACK_ALLOW ?? "");
  if (allow instanceof Error) return allow;
  const groups = section.groups;
  if (groups !== undefined && groups !== "mention" && groups !== "all") {
    return new Error(`slack.groups must be "mention" or "all" (got ${JSON.stringify(groups)})`);
  }
  const apiUrl = env.RUDDER_SLACK_API_URL?.trim();
  if (apiUrl && !/^https?:\/\/[^\s]+$/.test(apiUrl)) {
    return new Error(`RUDDER_SLACK_API_URL must be an http or https URL (got "${apiUrl}")`);
  }
  return {
    botToken,
    ...(appToken === undefined ? {} : { appToken }),
    ...(signingSecret === undefined ? {} : { signingSecret }),
    allow,
    ...(groups === undefined ? {} : { groups }),
    ...(apiUrl ? { apiUrl: apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/` } : {}),
  };
}

const KEYS = new Set(["appTokenFile", "botTokenFile", "signingSecretFile", "allow", "groups"]);

function unknownKey(section: Record<string, unknown>): string | undefined {
  return Object.keys(section).find((key) => !KEYS.has(key));
}

/** A secret from a flag's file, the section's file, or a variable; undefined when none. */
function secret(
  folder: string,
  what: string,
  flagFile: string | undefined,
  flag: string,
  sectionFile: unknown,
  variable: string | undefined,
): string | undefined | Error {
  const file =
    flagFile ?? (typeof sectionFile === "string" ? resolve(folder, sectionFile) : undefined);
  if (sectionFile !== undefined && typeof sectionFile !== "string") {
    return new Error(`the slack section's ${what} file must be a path`);
  }
  if (file === undefined) return variable?.trim() || undefined;
  const named = flagFile !== undefined ? `${flag} ${file}` : `the Slack ${what} file ${file}`;
  let value: string;
  try {
    value = readFileSync(file, "utf8").trim();
  } catch (error) {
    return new Error(
      `cannot read ${named} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`,
    );
  }
  return value === "" ? new Error(`${named} is empty`) : value;
}

function listOf(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.map(String).join(",");
  return typeof value === "string" ? value : undefined;
}

function allowList(raw: string): string[] | Error {
  const ids = raw
    .split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  const bad = ids.find((id) => !/^[UWCGD][A-Z0-9]{2,}$/.test(id));
  if (bad !== undefined) {
    return new Error(`Slack allow-lists take user or channel ids such as U012AB3CD (got "${bad}")`);
  }
  return [...new Set(ids)];
}
