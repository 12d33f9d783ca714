import {
  type Agent,
  type AgentSideConnection,
  type CancelNotification,
  type ClientCapabilities,
  type InitializeRequest,
  type InitializeResponse,
  type LoadSessionRequest,
  type McpServer,
  type NewSessionRequest,
  PROTOCOL_VERSION,
  type PromptRequest,
  type PromptResponse,
  RequestError,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { Session } from "../agent/session.js";
import type { Confirm } from "../agent/tool-dispatch.js";
import { eventUpdates } from "./event-updates.js";
import { historyUpdates } from "./history-replay.js";
import { acpConfirm } from "./permission-request.js";
import { promptParts } from "./prompt-text.js";

/** A rudder session opened for an ACP client. */
export interface OpenedSession {
  session: Session;
  /** The real path of the workspace. */
  workspace: string;
  /** Stops what the session started (its MCP servers). */
  close(): Promise<void>;
}

export interface OpenSessionRequest {
  cwd: string;
  /** The client's MCP servers, as an `mcpServers` object of rudder's configuration. */
  mcpServers: Record<string, unknown>;
  /** `session/load`: the stored session to carry on. */
  loadId?: string;
  /** Answers the gate's asks (through `session/request_permission`). */
  confirm: Confirm;
  /** The client's file access, when it offers `fs` (absent: rudder reads and writes itself). */
  clientFiles?: ClientFileAccess;
}

/** What the client offers of `fs/read_text_file` and `fs/write_text_file`, for one session. */
export interface ClientFileAccess {
  canRead: boolean;
  canWrite: boolean;
  read(path: string, line: number | undefined, limit: number): Promise<string>;
  write(path: string, content: string): Promise<void>;
}

/** Opens sessions: a new one, or a stored one (`loadId`); an error text for the client. */
export type OpenSession = (
  request: OpenSessionRequest,
) => Promise<{ ok: true; opened: OpenedSession } | { ok: false; error: string }>;

interface LiveSession {
  opened: OpenedSession;
  toolCallId: string;
  /** Updates go out in order; a prompt answers only after its updates. */
  updates: Promise<void>;
}

/** The client's stdio MCP servers as rudder's `mcpServers` (http and sse are not supported). */
function mcpServersOf(servers: readonly McpServer[]): Record<string, unknown> {
  const entries: [string, unknown][] = [];
  for (const server of servers) {
    if ("type" in server && server.type !== undefined) {
      entries.push([server.name, { type: server.type }]);
      continue;
    }
    const stdio = server as Extract<McpServer, { command: string }>;
    entries.push([
      stdio.name,
      {
        command: stdio.command,
        args: stdio.args,
        env: Object.fromEntries(stdio.env.map(({ name, value }) => [name, value])),
      },
    ]);
  }
  return Object.fromEntries(entries);
}

/**
 * rudder as an Agent Client Protocol agent: each ACP session is a rudder `Session`, its events
 * streamed as `session/update`s, its asks sent as `session/request_permission`, a
 * `session/cancel` aborting the turn (and killing the processes it runs).
 */
export class RudderAcpAgent implements Agent {
  readonly #connection: AgentSideConnection;
  readonly #open: OpenSession;
  readonly #sessions = new Map<string, LiveSession>();
  #capabilities: ClientCapabilities = {};

  constructor(connection: AgentSideConnection, open: OpenSession) {
    this.#connection = connection;
    this.#open = open;
  }

  async initialize(params: InitializeRequest): Promise<InitializeResponse> {
    this.#capabilities = params.clientCapabilities ?? {};
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
      },
      authMethods: [],
    };
  }

  async authenticate(): Promise<void> {}

  async newSession(params: NewSessionRequest): Promise<{ sessionId: string }> {
    const live = await this.#start(params.cwd, params.mcpServers);
    return { sessionId: live.opened.session.id };
  }

  async loadSession(params: LoadSessionRequest): Promise<Record<string, never>> {
    const live = await this.#start(params.cwd, params.mcpServers, params.sessionId);
    const { session, workspace } = live.opened;
    for (const update of historyUpdates(session.history, workspace)) this.#send(live, update);
    await live.updates;
    return {};
  }

  async prompt(params: PromptRequest): Promise<PromptResponse> {
    const live = this.#live(params.sessionId);
    const { session } = live.opened;
    if (session.running)
      throw RequestError.invalidRequest(undefined, "a prompt is already running");
    const parts = promptParts(params.prompt);
    if (parts.images.length > 0) {
      // The images go in the user's message, before the text `send` adds to it.
      session.history.push({ role: "user", content: parts.images });
    }
    const outcome = await session.send(parts.text);
    if (outcome.isError && outcome.subtype !== "aborted") {
      this.#send(live, {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: `\n${outcome.result}` },
      });
    }
    await live.updates;
    if (outcome.subtype === "aborted") return { stopReason: "cancelled" };
    if (outcome.subtype === "error_max_turns") return { stopReason: "max_turn_requests" };
    return { stopReason: "end_turn" };
  }

  async cancel(params: CancelNotification): Promise<void> {
    this.#sessions.get(params.sessionId)?.opened.session.abort("cancelled by the client");
  }

  /** Ends every session (the client went away). */
  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(
      sessions.map(async (live) => {
        await live.opened.session.close();
        await live.opened.close();
      }),
    );
  }

  async #start(cwd: string, servers: readonly McpServer[], loadId?: string): Promise<LiveSession> {
    const holder: { live?: LiveSession } = {};
    const confirm = acpConfirm({
      get sessionId() {
        return holder.live?.opened.session.id ?? "";
      },
      get workspace() {
        return holder.live?.opened.workspace ?? cwd;
      },
      toolCallId: () => holder.live?.toolCallId ?? "",
      request: (request) => this.#connection.requestPermission(request),
      always: new Set<string>(),
    });
    const fs = this.#capabilities.fs;
    const sessionId = (): string => holder.live?.opened.session.id ?? "";
    const clientFiles: ClientFileAccess = {
      canRead: fs?.readTextFile === true,
      canWrite: fs?.writeTextFile === true,
      read: async (path, line, limit) =>
        (
          await this.#connection.readTextFile({
            sessionId: sessionId(),
            path,
            limit,
            ...(line === undefined ? {} : { line }),
          })
        ).content,
      write: async (path, content) => {
        await this.#connection.writeTextFile({ sessionId: sessionId(), path, content });
      },
    };
    const opened = await this.#open({
      cwd,
      mcpServers: mcpServersOf(servers),
      ...(loadId === undefined ? {} : { loadId }),
      confirm,
      ...(clientFiles.canRead || clientFiles.canWrite ? { clientFiles } : {}),
    });
    if (!opened.ok) throw RequestError.invalidParams(undefined, opened.error);
    const live: LiveSession = { opened: opened.opened, toolCallId: "", updates: Promise.resolve() };
    holder.live = live;
    opened.opened.session.subscribe((event) => {
      if (event.type === "tool_start") live.toolCallId = event.toolUseId;
      for (const update of eventUpdates(event, opened.opened.workspace)) this.#send(live, update);
    });
    this.#sessions.set(opened.opened.session.id, live);
    return live;
  }

  #live(sessionId: string): LiveSession {
    const live = this.#sessions.get(sessionId);
    if (live === undefined) throw RequestError.invalidParams(undefined, `no session ${sessionId}`);
    return live;
  }

  #send(live: LiveSession, update: SessionUpdate): void {
    const sessionId = live.opened.session.id;
    live.updates = live.updates
      .then(() => this.#connection.sessionUpdate({ sessionId, update }))
      .catch(() => undefined);
  }
}
