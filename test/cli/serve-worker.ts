import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { apiCaller } from "../gateway/helpers.js";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import { CLAUDE_CODE_BIN } from "../helpers/one-shot-engine.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

export interface ServeWorker {
  run: RudderRun;
  url: string;
  token: string;
  dataDir: string;
  /** The API with the worker's token; resolves with the JSON body. */
  api: <T>(method: string, path: string, body?: unknown) => Promise<T>;
}

/**
 * Starts `rudder serve --port 0 --data <dataDir> ...args` (the built CLI, its own process
 * group, pushed onto `running` for the caller to stop); resolves once it prints its link.
 */
export async function startServeWorker(
  dataDir: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; running: RudderRun[] },
): Promise<ServeWorker> {
  const run = startRudder(["serve", "--port", "0", "--data", dataDir, ...args], options);
  options.running.push(run);
  await waitFor(
    () => /one-time link\): (\S+)/.test(run.stdout()) || run.child.exitCode !== null,
    "the one-time link or an exit",
    30_000,
  );
  const link = /one-time link\): (\S+)/.exec(run.stdout())?.[1];
  if (link === undefined) throw new Error(`rudder serve did not start: ${run.stderr()}`);
  const token = readFileSync(join(dataDir, "token"), "utf8").trim();
  const url = link.replace(/\/#code=.*/, "");
  const call = apiCaller(url, token);
  const api = async <T>(method: string, path: string, body?: unknown) =>
    (await call<T>(method, path, body)).body;
  return { run, url, token, dataDir, api };
}

export type Engine = "rudder" | "claude";

export interface EngineWorker extends ServeWorker {
  home: string;
  cwd: string;
}

/** `GET /api/channels/:id/messages`, as the tests read it. */
export interface ListedMessages {
  messages: Array<{
    id: string;
    kind: string;
    text: string;
    state: string | null;
    replyTo: string | null;
  }>;
}

/**
 * `rudder serve --engine <engine> --no-sandbox ...args` as on a machine of its own: its HOME,
 * `--data` and working folder (`cwdName`) under `folder`, its agents (rudder, or the real
 * Claude Code) on the fake Messages API at `apiUrl`.
 */
export async function startEngineWorker(
  folder: string,
  engine: Engine,
  apiUrl: string,
  running: RudderRun[],
  options: { args?: string[]; cwdName?: string } = {},
): Promise<EngineWorker> {
  const home = join(folder, "home");
  const cwd = join(folder, options.cwdName ?? "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const env = {
    ...claudeCodeEnv(home, apiUrl),
    RUDDER_MAX_RETRIES: "0",
    ...(engine === "claude" ? { RUDDER_CLAUDE_BIN: CLAUDE_CODE_BIN } : {}),
  };
  const args = ["--engine", engine, "--cwd", cwd, "--no-sandbox", ...(options.args ?? [])];
  const started = await startServeWorker(join(folder, "data"), args, { cwd, env, running });
  return { ...started, home, cwd };
}
