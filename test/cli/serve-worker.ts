import { readFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "../agent/kernel-helpers.js";
import { apiCaller } from "../gateway/helpers.js";
import { type RudderRun, startRudder } from "./rudder-process.js";

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
  await waitUntil(
    () => /one-time link\): (\S+)/.test(run.stdout()) || run.child.exitCode !== null,
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
