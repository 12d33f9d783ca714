/**
 * Slack's two official clients, loaded only when a Slack source starts (a dynamic import, so
 * `rudder run` and a gateway without Slack never pay for them): the Web API client with the
 * bot token (calls fail at once on a 429, so the reply ledger waits out Retry-After itself), and
 * the Socket Mode client with the app token. Their logging goes to the gateway's log, warnings
 * and errors only, with the tokens taken out.
 */
import type { SocketModeClient } from "@slack/socket-mode";
import type { WebClient } from "@slack/web-api";

export interface SlackClientOptions {
  botToken: string;
  /** Only for Socket Mode. */
  appToken?: string | undefined;
  /** The Web API's base URL (`RUDDER_SLACK_API_URL`), ending in a slash. */
  apiUrl?: string | undefined;
  socketRetryMs?: number | undefined;
  log(line: string): void;
  redact(text: string): string;
}

export interface SlackClients {
  web: WebClient;
  socket: SocketModeClient | undefined;
}

/** One Web API call's limit: a call without an answer this long fails (and is tried again). */
const CALL_TIMEOUT_MS = 30_000;

export async function slackClients(options: SlackClientOptions): Promise<SlackClients> {
  const { WebClient } = await import("@slack/web-api");
  const line =
    (level: string) =>
    (...parts: unknown[]) =>
      options.log(options.redact(`slack (${level}): ${parts.map(String).join(" ")}`));
  let level = "warn";
  const logger = {
    debug: () => {},
    info: () => {},
    warn: line("warning"),
    error: line("error"),
    setLevel: (next: string) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => {},
  };
  const slackApiUrl = options.apiUrl ?? "https://slack.com/api/";
  const web = new WebClient(options.botToken, {
    slackApiUrl,
    // biome-ignore lint/suspicious/noExplicitAny: @slack/logger's LogLevel is a string enum.
    logger: logger as any,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: CALL_TIMEOUT_MS,
  });
  if (options.appToken === undefined) return { web, socket: undefined };
  const { SocketModeClient } = await import("@slack/socket-mode");
  const socket = new SocketModeClient({
    appToken: options.appToken,
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    logger: logger as any,
    clientOptions: { slackApiUrl },
    ...(options.socketRetryMs === undefined ? {} : { clientPingTimeout: options.socketRetryMs }),
  });
  return { web, socket };
}
