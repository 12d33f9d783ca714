import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseSize } from "../gateway/agents/memory-floor.js";
import {
  type ResolvedBinding,
  StoreUnavailableError,
  startGateway,
  storeLocation,
  TrustedProxies,
} from "../gateway/index.js";
import { costUsd } from "../model/pricing.js";
import { commandArgs, type FlagSpecs, stringFlag } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { removeGatewayAddress, writeGatewayAddress } from "./gateway-address.js";
import { rudderExecutable } from "./gateway-engine.js";
import { agentInfoLine } from "./serve-agent-info.js";
import { bindingLines, type ServeConfig, serveConfig } from "./serve-config.js";
import { serveMedia } from "./serve-media.js";
import { serveSources } from "./serve-sources.js";

export const SERVE_FLAGS: FlagSpecs = {
  port: { type: "string" },
  host: { type: "string" },
  "allowed-hosts": { type: "string" },
  "max-sse": { type: "string" },
  "max-sse-per-client": { type: "string" },
  "trust-proxy": { type: "string" },
  "header-timeout": { type: "string" },
  "body-timeout": { type: "string" },
  data: { type: "string" },
  config: { type: "string" },
  store: { type: "string" },
  "lease-seconds": { type: "string" },
  "shutdown-wait": { type: "string" },
  "max-live": { type: "string" },
  "max-agents": { type: "string" },
  "idle-minutes": { type: "string" },
  "min-free-memory": { type: "string" },
  engine: { type: "string" },
  model: { type: "string" },
  cwd: { type: "string" },
  "permission-timeout": { type: "string" },
  "no-permission-prompts": { type: "boolean" },
  "no-sandbox": { type: "boolean" },
  "telegram-token-file": { type: "string" },
  "telegram-allow": { type: "string" },
  "slack-app-token-file": { type: "string" },
  "slack-bot-token-file": { type: "string" },
  "slack-allow": { type: "string" },
  "discord-token-file": { type: "string" },
  "discord-allow": { type: "string" },
};

export const SERVE_USAGE = `usage: rudder serve [--port 4317] [--host 127.0.0.1] [--allowed-hosts NAME,NAME:PORT]
                    [--max-sse 512] [--max-sse-per-client 64] [--trust-proxy ADDR,CIDR]
                    [--header-timeout 10] [--body-timeout 30] [--data ~/.rudder] [--store postgres://...]
                    [--lease-seconds 15] [--shutdown-wait 20] [--max-live 8] [--max-agents 16] [--idle-minutes 20] [--engine rudder|claude] [--model M] [--cwd DIR]
                    [--min-free-memory SIZE] [--permission-timeout 300] [--no-permission-prompts] [--no-sandbox]
                    [--telegram-token-file FILE [--telegram-allow ID,ID]] [--config FILE]
                    [--slack-app-token-file FILE --slack-bot-token-file FILE [--slack-allow ID,ID]]
                    [--discord-token-file FILE [--discord-allow ID,role:ID]]
  Starts the gateway: the web page, the HTTP API, the scheduler. Each channel gets its own
  long-lived agent process: rudder itself (default) or the Claude Code CLI (--engine claude).
  --max-live channels keep their process; past them a message is answered by a one-shot process.
  --max-agents caps all agent processes, one-shots included: past it a message waits, stored,
  and is answered in order as processes free (its answer to the POST says "waiting").
  --min-free-memory (e.g. 2G) keeps that much of the machine's memory free (MemAvailable): below
  it idle agents are stopped, least recently used first, and new turns wait, with a log line why.
  When an agent asks for permission (an rm, an "ask" rule), the page shows the request and waits
  --permission-timeout seconds for a person; --no-permission-prompts denies such calls at once.
  --no-sandbox runs rudder agents' bash commands outside the sandbox (bubblewrap).
  --config FILE (default: config.json in --data when present) binds channel patterns to a
  folder, engine, model, settings and budget each (docs/workspaces.md); it is reloaded when
  it changes or on SIGHUP. --cwd, --engine and --model only fill what its "defaults" leave out:
  the file wins over them.
  With a Telegram bot token (--telegram-token-file, or RUDDER_TELEGRAM_TOKEN), each Telegram chat
  with the bot is the channel telegram:<chat id> (a forum topic telegram:<chat id>:<topic id>);
  the user or chat ids of --telegram-allow (or RUDDER_TELEGRAM_ALLOW) reach an agent, and so do
  people let in by pairing code (rudder pairing approve telegram CODE); without an allow-list
  the bot starts in pairing mode.
  With Slack tokens (--slack-app-token-file for Socket Mode and --slack-bot-token-file, or the
  configuration's "slack" section, or RUDDER_SLACK_APP_TOKEN and RUDDER_SLACK_BOT_TOKEN), each
  Slack thread the bot is asked in is the channel slack:<team>:<channel>:<thread ts>; the user
  or channel ids of --slack-allow (or RUDDER_SLACK_ALLOW) reach an agent (docs/slack.md).
  With a Discord bot token (--discord-token-file, the configuration's "discord" section, or
  RUDDER_DISCORD_TOKEN), a mention of the bot opens a thread, the channel
  discord:<guild>:<channel>:<thread>, and a DM is discord:dm:<channel>:<channel> (docs/discord.md).
  Requests must name the gateway in Host: a loopback name or --host on its port, or one of
  --allowed-hosts (a proxy's name; NAME matches any port); others are refused. A client has
  --header-timeout seconds for a request's headers and --body-timeout more for its body; at most
  --max-sse event streams are open (--max-sse-per-client from one address), then 503.
  Behind a reverse proxy, --trust-proxy (or RUDDER_TRUST_PROXY) names the proxies' addresses
  or CIDRs ("loopback" for 127.0.0.0/8 and ::1) whose X-Forwarded-For names the client; by
  default none, so X-Forwarded-For is ignored.
  State lives in SQLite in --data unless --store (or RUDDER_STORE) names a PostgreSQL database,
  which several workers may share (they accept the same token); each channel is then driven by
  the worker holding its lease, renewed while it lives and taken by another --lease-seconds
  after it dies. Stopped (SIGTERM) while that database is unreachable, a worker waits up to
  --shutdown-wait seconds for it to store the answers it holds; the rest are answered again.`;

export const DEMO_HINT =
  "No model credentials, so agents run the offline demo model. To connect a real model, set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, plus ANTHROPIC_BASE_URL for a compatible server) and restart, or use --engine claude with a logged-in Claude Code.";

function wholeNumber(
  raw: string | undefined,
  flag: string,
  min: number,
): number | undefined | Error {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    return new Error(`${flag} needs a whole number of at least ${min} (got "${raw}")`);
  }
  return value;
}

/** `--min-free-memory SIZE` as the gateway's memory floor; undefined when not given. */
function memoryFloorFlag(raw: string | undefined): { minFreeBytes: number } | undefined | Error {
  if (raw === undefined) return undefined;
  const bytes = parseSize(raw);
  if (bytes === undefined || bytes <= 0) {
    return new Error(`--min-free-memory needs a size such as 2G or 512M (got "${raw}")`);
  }
  return { minFreeBytes: bytes };
}

function listFlag(raw: string | undefined): string[] {
  return (raw ?? "").split(",").flatMap((entry) => (entry.trim() === "" ? [] : [entry.trim()]));
}

/** Resolves `--data`, defaulting to `~/.rudder`, and creates it, 0700 (the gateway narrows an older one). */
export function dataDirectory(raw: string | undefined, env: NodeJS.ProcessEnv): string {
  const directory = resolve(raw ?? env.RUDDER_HOME ?? join(env.HOME ?? homedir(), ".rudder"));
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  return directory;
}

/** Says so when a binding runs Claude Code agents and nothing can hide the data folder from them. */
function warnUnhiddenDataFolder(config: ServeConfig, dataDir: string, io: CommandIo): void {
  if (!config.bindings.list().some((binding) => binding.engine === "claude")) return;
  const wrapper = config.wrapper;
  if (wrapper?.kind === "unavailable") {
    io.stderr.write(
      `rudder serve: Claude Code agents can read the data folder ${dataDir} (its token, every channel): ${wrapper.reason}\n`,
    );
  }
}

/** `rudder serve`: runs until SIGINT or SIGTERM. Resolves to the exit code. */
export async function serveCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs("serve", argv, SERVE_FLAGS, SERVE_USAGE, io);
  if (typeof args === "number") return args;
  const fail = (message: string) => {
    io.stderr.write(`rudder serve: ${message}\n`);
    return 2;
  };
  if (args.positionals.length > 0) return fail(`unexpected argument "${args.positionals[0]}"`);
  const port = wholeNumber(stringFlag(args, "port"), "--port", 0);
  const maxLive = wholeNumber(stringFlag(args, "max-live"), "--max-live", 0);
  const maxAgents = wholeNumber(stringFlag(args, "max-agents"), "--max-agents", 1);
  const idleMinutes = wholeNumber(stringFlag(args, "idle-minutes"), "--idle-minutes", 1);
  const permissionTimeout = wholeNumber(
    stringFlag(args, "permission-timeout"),
    "--permission-timeout",
    1,
  );
  const maxSse = wholeNumber(stringFlag(args, "max-sse"), "--max-sse", 1);
  const maxSsePerClient = wholeNumber(
    stringFlag(args, "max-sse-per-client"),
    "--max-sse-per-client",
    1,
  );
  const headerTimeout = wholeNumber(stringFlag(args, "header-timeout"), "--header-timeout", 1);
  const bodyTimeout = wholeNumber(stringFlag(args, "body-timeout"), "--body-timeout", 1);
  const leaseSeconds = wholeNumber(stringFlag(args, "lease-seconds"), "--lease-seconds", 1);
  const shutdownWait = wholeNumber(stringFlag(args, "shutdown-wait"), "--shutdown-wait", 0);
  const memoryFloor = memoryFloorFlag(stringFlag(args, "min-free-memory"));
  const limits = [maxSse, maxSsePerClient, headerTimeout, bodyTimeout, leaseSeconds, shutdownWait];
  for (const value of [port, maxLive, maxAgents, idleMinutes, permissionTimeout, ...limits])
    if (value instanceof Error) return fail(value.message);
  if (memoryFloor instanceof Error) return fail(memoryFloor.message);
  const engineName = stringFlag(args, "engine") ?? "rudder";
  if (engineName !== "rudder" && engineName !== "claude") {
    return fail(`--engine must be rudder or claude (got "${engineName}")`);
  }

  const trustProxy = listFlag(stringFlag(args, "trust-proxy") ?? io.env.RUDDER_TRUST_PROXY);
  const trusted = TrustedProxies.parse(trustProxy);
  if (trusted instanceof Error) return fail(trusted.message);

  const store = storeLocation(stringFlag(args, "store") ?? io.env.RUDDER_STORE);
  if (store instanceof Error) return fail(store.message);

  const media = serveMedia(io.env);
  if (media instanceof Error) return fail(media.message);

  const logger = (line: string) => io.stderr.write(`${line}\n`);
  const dataDir = dataDirectory(stringFlag(args, "data"), io.env);
  const config = await serveConfig({
    configFlag: stringFlag(args, "config"),
    dataDir,
    fallback: {
      cwd: resolve(stringFlag(args, "cwd") ?? process.cwd()),
      engine: engineName,
      model: stringFlag(args, "model"),
    },
    noSandbox: args.flags["no-sandbox"] === true,
    env: io.env,
  });
  if (config instanceof Error) return fail(config.message);
  const sources = await serveSources(args, config, { env: io.env, dataDir, logger });
  if (sources instanceof Error) return fail(sources.message);
  const defaults = config.bindings.named("defaults") as ResolvedBinding;
  const demo = config.demoFor(defaults);
  const engine = config.engineFor(defaults, defaults.model);
  const info = await config.infoFor(defaults, defaults.model);
  warnUnhiddenDataFolder(config, dataDir, io);
  const shutdown = new AbortController();
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway({
      dataDir,
      store,
      ...(leaseSeconds === undefined ? {} : { leaseSeconds: leaseSeconds as number }),
      ...(shutdownWait === undefined ? {} : { shutdownWaitMs: (shutdownWait as number) * 1000 }),
      host: stringFlag(args, "host") ?? "127.0.0.1",
      allowedHosts: listFlag(stringFlag(args, "allowed-hosts")),
      trustProxy,
      ...(maxSse === undefined ? {} : { maxEventStreams: maxSse as number }),
      ...(maxSsePerClient === undefined
        ? {}
        : { maxEventStreamsPerClient: maxSsePerClient as number }),
      ...(headerTimeout === undefined
        ? {}
        : { headersTimeoutMs: (headerTimeout as number) * 1000 }),
      ...(bodyTimeout === undefined ? {} : { bodyTimeoutMs: (bodyTimeout as number) * 1000 }),
      port: (port as number | undefined) ?? 4317,
      ...(maxLive === undefined ? {} : { maxLive: maxLive as number }),
      ...(maxAgents === undefined ? {} : { maxAgents: maxAgents as number }),
      agentSpawner: true,
      ...(idleMinutes === undefined ? {} : { idleMinutes: idleMinutes as number }),
      ...(memoryFloor === undefined ? {} : { memoryFloor }),
      engine,
      engineName: defaults.engine,
      bindings: config.bindings,
      engineFor: config.engineFor,
      infoFor: config.infoFor,
      permissionPrompts: args.flags["no-permission-prompts"] !== true,
      ...(permissionTimeout === undefined
        ? {}
        : { permissionTimeoutMs: (permissionTimeout as number) * 1000 }),
      demo,
      ...(demo ? { demoHint: DEMO_HINT } : {}),
      info,
      priceUsage: costUsd,
      ...(sources.length > 0 ? { sources } : {}),
      media,
      // send_file for every channel's agent: this rudder's own MCP server, started by the agent.
      channelTools: { command: process.execPath, args: [rudderExecutable(), "mcp-channel-tools"] },
      logger,
      signal: shutdown.signal,
    });
  } catch (error) {
    if (error instanceof StoreUnavailableError) {
      io.stderr.write(`rudder serve: ${error.message}\n`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      return fail(`port ${String(port ?? 4317)} is in use; pick another with --port`);
    if (code === "EACCES") return fail(`not allowed to listen on port ${String(port ?? 4317)}`);
    return fail(error instanceof Error ? error.message : String(error));
  }

  // Where `rudder send`, `link` and the other clients of this data folder find it.
  writeGatewayAddress(dataDir, gateway.url);
  // One write, so that a reader who sees the link sees the rest too.
  io.stdout.write(
    `${agentInfoLine(info)}\n${await bindingLines(config)}` +
      `open the page (one-time link): ${gateway.pageLink}\n` +
      '  (it works once, within 10 minutes; "rudder link" prints a fresh one)\n' +
      (demo ? `demo mode: ${DEMO_HINT}\n` : ""),
  );

  const reload = () => void gateway.reloadConfig();
  process.on("SIGHUP", reload);
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  process.off("SIGHUP", reload);
  io.stderr.write("rudder serve: stopping\n");
  shutdown.abort();
  await gateway.close();
  removeGatewayAddress(dataDir, gateway.url);
  return 0;
}
