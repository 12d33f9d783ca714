import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type GatewayOptions, type RunningGateway, startGateway } from "../../src/gateway/index.js";
import { FAKE_CLAUDE_SWITCH, RUDDER_BIN } from "../helpers/fixtures.js";
import { tempFolder } from "../helpers/temp-folders.js";
import { waitFor } from "../helpers/wait-for.js";

/** The entries the fake CLI appended to its log (`FAKE_CLAUDE_LOG`). */
export function fakeLogEntries(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Waits until `count` fake processes have started with `scenario`. */
export function fakeStarted(path: string, scenario: string, count = 1) {
  return waitFor(() => {
    const starts = fakeLogEntries(path).filter(
      (entry) => entry.event === "start" && entry.scenario === scenario,
    );
    return starts.length >= count ? starts : undefined;
  }, `${count} fake CLI processes started with ${scenario}`);
}

export interface TestGateway extends RunningGateway {
  dataDir: string;
  scenarioFile: string;
  fakeLog: string;
  setScenario(scenario: string): void;
  api<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }>;
  messages(channelId: string): Promise<ApiMessage[]>;
  cleanup(): Promise<void>;
}

export interface ApiMessage {
  id: string;
  role: string;
  kind: string;
  text: string;
  state: string | null;
  replyTo: string | null;
  attempts: number;
  deliveries: number;
  /** A user message's files (`MessageAttachment[]`), when it came with any. */
  attachments?: Array<Record<string, unknown>>;
}

/** A temp data folder and scenario file for a gateway of the tests. */
export function testFolders(prefix: string): {
  dataDir: string;
  scenarioFile: string;
  fakeLog: string;
  remove(): void;
} {
  const { path: root, remove } = tempFolder(`rudder-${prefix}-`);
  return {
    dataDir: join(root, "data"),
    scenarioFile: join(root, "scenario"),
    fakeLog: join(root, "fake.log"),
    remove,
  };
}

export function apiCaller(url: string, token: string) {
  return async <T = unknown>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as T };
  };
}

/**
 * A gateway whose agents are rudder itself, working in `workspace` against the fake Messages
 * API at `apiUrl`, with rudder's data folder in `workspace/.rudder-home` and no retries of
 * the model; `env` adds to (or, with `undefined`, removes from) the agents' environment. The
 * engine is named `rudder` as `rudder serve` names it, so the agents get rudder's flags
 * (`--ask-before-waking`, `send_file` built in), not Claude Code's.
 */
export function startRudderGateway(
  options: Partial<GatewayOptions> & {
    prefix: string;
    apiUrl: string;
    workspace: string;
    env?: NodeJS.ProcessEnv;
    /** Flags for every agent, e.g. `--include-hook-events` (as `rudder serve` passes). */
    args?: string[];
  },
): Promise<TestGateway> {
  const { apiUrl, workspace, env, args, ...rest } = options;
  return startTestGateway({
    engineName: "rudder",
    ...rest,
    engine: {
      claudeBin: RUDDER_BIN,
      ...(args === undefined ? {} : { args }),
      cwd: workspace,
      env: {
        ANTHROPIC_BASE_URL: apiUrl,
        ANTHROPIC_API_KEY: "dummy",
        RUDDER_HOME: join(workspace, ".rudder-home"),
        RUDDER_MAX_RETRIES: "0",
        ...env,
      },
    },
  });
}

/**
 * A gateway on a free port whose agents are the fake Claude CLI, scenario `normal` first; on
 * `folders`, another's (a restart on its data: their remover is the other's), else fresh ones.
 */
export async function startTestGateway(
  options: Partial<GatewayOptions> & {
    scenario?: string;
    prefix?: string;
    folders?: Pick<TestGateway, "dataDir" | "scenarioFile" | "fakeLog">;
  } = {},
): Promise<TestGateway> {
  const folders = options.folders
    ? { ...options.folders, remove: () => {} }
    : testFolders(options.prefix ?? "gateway");
  writeFileSync(folders.scenarioFile, options.scenario ?? "normal");
  const { scenario: _scenario, prefix: _prefix, folders: _folders, ...rest } = options;
  const gateway = await startGateway({
    dataDir: folders.dataDir,
    port: 0,
    engine: {
      claudeBin: FAKE_CLAUDE_SWITCH,
      env: { GATEWAY_TEST_SCENARIO_FILE: folders.scenarioFile, FAKE_CLAUDE_LOG: folders.fakeLog },
    },
    ...rest,
  });
  const api = apiCaller(gateway.url, gateway.token);
  return {
    ...gateway,
    dataDir: folders.dataDir,
    scenarioFile: folders.scenarioFile,
    fakeLog: folders.fakeLog,
    setScenario: (scenario) => writeFileSync(folders.scenarioFile, scenario),
    api,
    messages: async (channelId) =>
      (await api<{ messages: ApiMessage[] }>("GET", `/api/channels/${channelId}/messages`)).body
        .messages,
    cleanup: async () => {
      await gateway.close();
      folders.remove();
    },
  };
}

export interface SseEvent {
  id: string | undefined;
  data: Record<string, unknown> & { type: string };
}

/** Reads a channel's Server-Sent Events over fetch, collecting them for assertions. */
export function openEvents(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const done = (async () => {
    const response = await fetch(url, { headers, signal: controller.signal });
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) comments.push(line);
          else if (line.startsWith("id:")) id = line.slice(3).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
        }
        if (data.length > 0) events.push({ id, data: JSON.parse(data.join("\n")) });
      }
    }
  })().catch(() => undefined);
  return {
    events,
    comments,
    waitFor: (predicate: (event: SseEvent) => boolean, what: string) =>
      waitFor(() => events.find(predicate), what),
    close: async () => {
      controller.abort();
      await done;
    },
  };
}
