/**
 * What `startGateway` takes and gives back: its options (the engine its agents run, the store,
 * the limits), the running gateway, and the options each agent process gets from the engine.
 */
import type { ClaudeProcessOptions } from "../claude-cli/claude-process-types.js";
import type { OwnedStart } from "../claude-cli/spawned-child.js";
import type { ChannelToolsServer } from "./agents/channel-tools.js";
import type { GatewayBindings } from "./bindings/bindings.js";
import type { ReloadOutcome } from "./bindings/config-reload.js";
import type { ResolvedBinding } from "./bindings/resolved-binding.js";
import type { UsagePrice } from "./budgets/turn-meter.js";
import type { ChannelSource } from "./channel-source.js";
import type { TranscriptionOptions } from "./media/transcriber.js";
import type { StoreLocation } from "./store/store-location.js";

/** The agent every channel talks to: a stream-json CLI (`rudder run ...` or `claude`). */
export interface GatewayEngine {
  claudeBin: string;
  /** Arguments right after the binary, e.g. `["dist/cli.js", "run"]` with `node` as the binary. */
  binArgs?: string[];
  /** Extra arguments after the stream-json flags. */
  args?: string[];
  /** Overlaid on the gateway's environment for each agent process. */
  env?: NodeJS.ProcessEnv;
  model?: string;
  /** The agents' working folder; default the gateway's. */
  cwd?: string;
  /**
   * Where the engine keeps a session's transcript on this machine. With a store several
   * workers share, the file is mirrored in the store and restored before another worker
   * resumes it (see `TranscriptMirror`).
   */
  sessionFile?: (sessionId: string) => string;
  /** How each agent process is owned when it is not by the parent-death signal (`OwnedStart`). */
  owned?: OwnedStart;
}

/**
 * What the agents are, as `GET /api/info` and the page's header tell it: the folder they work
 * in, the engine (`rudder` or `claude`), the model, and whether rudder's sandbox confines their
 * commands.
 */
export interface AgentInfo {
  cwd: string;
  engine: string;
  model: string;
  sandbox: boolean;
}

export interface GatewayOptions {
  dataDir: string;
  /** Where state lives; default SQLite as `<dataDir>/gateway.db`. */
  store?: StoreLocation;
  /**
   * With a store several workers share: how long a channel's lease lasts unless renewed
   * (default 15 s), and this worker's name in leases and `GET /api/health` (default
   * `<host>-<pid>-<random>`).
   */
  leaseSeconds?: number;
  workerName?: string;
  /**
   * With a store several workers share, how session files are kept in it (see
   * `TranscriptMirror`, `startTranscriptPruning`): a file's chunks merged into one past
   * `compactAfter` (default 32); sessions no channel uses looked for every `pruneEveryMs`
   * (default 10 minutes) and deleted `keepUnusedMs` after their last chunk (default a day).
   */
  transcripts?: { compactAfter?: number; pruneEveryMs?: number; keepUnusedMs?: number };
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * `Host` values served besides the loopback names and `host` (on the gateway's port), each
   * `name` (any port) or `name:port`: what a reverse proxy or another name forwards.
   */
  allowedHosts?: string[];
  /** Default 4317; 0 picks a free port. */
  port?: number;
  /** Kept agent processes at most; default 8. */
  maxLive?: number;
  /**
   * Agent processes at most, kept and one-shot together; default 16. Past it messages wait,
   * stored, and are answered in order as processes free.
   */
  maxAgents?: number;
  /**
   * Start agent processes from a spawner process of the gateway's own (started at the first
   * agent start, ended with the gateway; src/claude-cli/spawner/) instead of from the gateway's
   * event loop, which each start holds until the agent has exec'd (150-250 ms on a loaded
   * machine), keeping it from taking new connections meanwhile. `rudder serve` does; default
   * false (agents spawned directly).
   */
  agentSpawner?: boolean;
  /** Kept processes idle this long are stopped; default 20. */
  idleMinutes?: number;
  /**
   * `--min-free-memory`: while the machine's `MemAvailable` is below `minFreeBytes`, no new agent
   * process starts (messages wait) and idle agents are stopped, least recently used first.
   * `meminfoFile` (for tests only) is read instead of /proc/meminfo; `checkEveryMs` default 2000.
   */
  memoryFloor?: { minFreeBytes: number; meminfoFile?: string; checkEveryMs?: number };
  /**
   * Where a channel whose binding says `"isolation": "worktree"` (and whose folder is in a git
   * repository) gets its own worktree; default `~/.rudder/worktrees` (`RUDDER_HOME`), see
   * src/gateway/worktrees/.
   */
  worktreeRoot?: string;
  engine?: GatewayEngine;
  /**
   * Which channels work where, with what (the configuration file's bindings; see
   * src/gateway/bindings). Default: every channel with `engine` (`engineName`) in its folder.
   */
  bindings?: GatewayBindings;
  /**
   * The engine a binding's agents run, with `model` (the channel's choice or the binding's;
   * undefined: the engine's own). Default: `engine` in the binding's folder with that model.
   */
  engineFor?: (binding: ResolvedBinding, model: string | undefined) => GatewayEngine;
  /**
   * What `/status`, `GET /api/bindings` and the page say of a binding's agents (the model as
   * the engine works it out, the sandbox). Default: the binding's values, sandbox false.
   */
  infoFor?: (binding: ResolvedBinding, model: string | undefined) => Promise<AgentInfo>;
  /**
   * Prices one model call's usage in US dollars (rudder's price table), so that a turn's spend
   * is known as it runs; without it, a turn's spend counts from its result only.
   */
  priceUsage?: UsagePrice;
  /** The clock budgets count days and months by (tests move it); default the system's. */
  clock?: () => Date;
  /** The built page; default `web/dist` of the package. */
  webRoot?: string;
  logger?: (line: string) => void;
  signal?: AbortSignal;
  /** Shown by `GET /api/health`: the engine's name (default `claude`). */
  engineName?: string;
  /** True when the engine is the demo model (no credentials). */
  demo?: boolean;
  /** How to connect a real model; `GET /api/health` returns it as `hint`. */
  demoHint?: string;
  /**
   * What `GET /api/info` says of the agents. Default: the engine's folder (or the gateway's),
   * `engineName`, the engine's model (or `default`, the engine's own choice), sandbox false.
   */
  info?: AgentInfo;
  /** Per turn; default 600000. */
  turnTimeoutMs?: number;
  /** Retry delay after a rate limit that names no reset time; default 60000. */
  rateLimitRetryMs?: number;
  /** When an unanswered message is given up on at start (see `DeliveryCaps`); 5 and 20. */
  maxAttempts?: number;
  maxDeliveries?: number;
  /** SSE heartbeat period; default 15000. */
  heartbeatMs?: number;
  /** Open event streams at most, in all (default 512) and per client address (default 64). */
  maxEventStreams?: number;
  maxEventStreamsPerClient?: number;
  /**
   * An event stream whose client reads nothing while more than this many bytes wait for it is
   * cut off (it resumes with `Last-Event-ID`); default 64 MiB (`MAX_UNREAD_BYTES`).
   */
  maxUnreadEventBytes?: number;
  /**
   * The reverse proxies (addresses, CIDRs, `loopback`) whose `X-Forwarded-For` names the
   * client, for the per-client cap and what names the client; default none, so it is ignored.
   */
  trustProxy?: string[];
  /**
   * A client has this long to send a request's headers (default 10000) and this much more
   * for its body (default 30000); a slower one is cut (408, or the connection closed).
   */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /**
   * Files that come with messages (chat sources, the HTTP API): the largest taken (default
   * 20 MB), and how voice notes are transcribed (an OpenAI-compatible endpoint or a local
   * command; default none: the agent is told where the voice note is). See src/gateway/media.
   */
  media?: { maxBytes?: number; transcription?: TranscriptionOptions };
  /**
   * How to start the channel tools' MCP server (`rudder mcp-channel-tools`), which gives every
   * channel's agent, both engines, the `send_file` tool (see agents/channel-tools.ts). `rudder
   * serve` sets it; absent, agents have no such tool.
   */
  channelTools?: ChannelToolsServer;
  /** Inbound sources besides the HTTP API (chat adapters such as `src/channels/telegram`). */
  sources?: ChannelSource[];
  /**
   * Tool calls an agent would ask about (a bash `rm`, a settings `ask` rule) wait for a
   * person's decision through the API and the page; default true. When false, the agent
   * refuses them itself.
   */
  permissionPrompts?: boolean;
  /** A permission request nobody answers is denied after this long; default 300000. */
  permissionTimeoutMs?: number;
  /**
   * With a networked store: how long `close()` waits at most for an unavailable store to come
   * back and store the answers this worker holds (turns that ended during the outage); default
   * 20000. What is still held then is not stored (one line names it): its messages are answered
   * again by the next owner of their channels.
   */
  shutdownWaitMs?: number;
}

export interface RunningGateway {
  url: string;
  token: string;
  /**
   * The page's link printed at start: `<url>/#code=<code>`, a code the page trades for the
   * token once, within 10 minutes, so that a log keeping the link keeps no working credential.
   */
  pageLink: string;
  /** Another such link, with a fresh code. */
  newPageLink(): string;
  /** How many event streams are open now. */
  eventStreams(): number;
  /**
   * Reads the configuration file again (`rudder serve` on SIGHUP; a change of the file does it
   * by itself): put in place, unchanged, or refused with its line (the old one stays).
   */
  reloadConfig(): Promise<ReloadOutcome>;
  close(): Promise<void>;
}

/**
 * Secrets of the gateway itself that its agents have no use for: an agent's bash could print
 * them into the conversation. (`undefined` removes a variable from the child's environment.)
 */
const GATEWAY_SECRETS = [
  "RUDDER_TELEGRAM_TOKEN",
  "RUDDER_SLACK_APP_TOKEN",
  "RUDDER_SLACK_BOT_TOKEN",
  "RUDDER_SLACK_SIGNING_SECRET",
  "RUDDER_DISCORD_TOKEN",
  "RUDDER_TRANSCRIBE_API_KEY",
];

/**
 * Names the gateway's data folder to its rudder agents, whose sandbox hides it wherever it is
 * (`--data`); the same name as `GATEWAY_DATA_VARIABLE` in the sandbox's policy.
 */
const GATEWAY_DATA_VARIABLE = "RUDDER_GATEWAY_DATA";

/** The options of each agent process, from the gateway's engine and its data folder. */
export function processOptions(
  engine: GatewayEngine | undefined,
  dataDir?: string,
): ClaudeProcessOptions {
  const env: Record<string, string | undefined> = { ...engine?.env };
  for (const name of GATEWAY_SECRETS) env[name] = undefined;
  if (dataDir !== undefined) env[GATEWAY_DATA_VARIABLE] = dataDir;
  const retries = env.RUDDER_MAX_RETRIES ?? process.env.RUDDER_MAX_RETRIES;
  if (retries !== undefined) env.RUDDER_MAX_RETRIES = retries;
  const maxRetries = retries !== undefined && /^\d+$/.test(retries) ? Number(retries) : undefined;
  return {
    ...(engine?.claudeBin ? { claudeBin: engine.claudeBin } : {}),
    ...(engine?.binArgs ? { binArgs: engine.binArgs } : {}),
    ...(engine?.args ? { extraArgs: engine.args } : {}),
    ...(engine?.model ? { model: engine.model } : {}),
    ...(engine?.cwd ? { cwd: engine.cwd } : {}),
    ...(engine?.owned ? { owned: engine.owned } : {}),
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    env,
  };
}
