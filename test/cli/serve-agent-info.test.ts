/**
 * `rudder serve` says at start which folder its agents work in, the engine, the model and
 * whether the sandbox is on, and `GET /api/info` answers the same; `serveAgentInfo` works the
 * model out from the environment as a rudder agent does.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveAgentInfo } from "../../src/cli/serve-agent-info.js";
import { type RudderRun, startRudder, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

let root: string;
const runs: RudderRun[] = [];

const env = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: join(root, "home"),
  RUDDER_MAX_RETRIES: "0",
});

/** Starts `rudder serve` with `args` and resolves with its stdout once the link is printed. */
async function serveStarted(
  args: string[],
): Promise<{ stdout: string; url: string; token: string }> {
  const data = join(root, `data-${runs.length}`);
  const run = startRudder(["serve", "--port", "0", "--data", data, ...args], {
    cwd: root,
    env: env(),
  });
  runs.push(run);
  await waitFor(() => /one-time link\): (\S+)/.test(run.stdout()), "the one-time link", 20_000);
  const link = /one-time link\): (\S+)/.exec(run.stdout())?.[1] ?? "";
  return {
    stdout: run.stdout(),
    url: link.replace(/\/#code=.*/, ""),
    token: readFileSync(join(data, "token"), "utf8").trim(),
  };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-info-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "project"));
});

afterAll(async () => {
  for (const run of runs) await stopRudder(run);
  rmSync(root, { recursive: true, force: true });
});

describe("rudder serve's start-up line and GET /api/info", () => {
  it("names the folder, the rudder engine, the demo model and the sandbox turned off", async () => {
    const project = join(root, "project");
    const started = await serveStarted(["--cwd", project, "--no-sandbox"]);
    expect(started.stdout).toContain(
      `agents work in ${project} (engine rudder, model demo, sandbox off)\n`,
    );
    const response = await fetch(`${started.url}/api/info`, {
      headers: { authorization: `Bearer ${started.token}` },
    });
    expect(await response.json()).toEqual({
      cwd: project,
      engine: "rudder",
      model: "demo",
      sandbox: false,
    });
  });

  it("names Claude Code's model as given, and no rudder sandbox for it", async () => {
    const project = join(root, "project");
    const started = await serveStarted(["--cwd", project, "--engine", "claude", "--model", "opus"]);
    expect(started.stdout).toContain(
      `agents work in ${project} (engine claude, model opus, sandbox off)\n`,
    );
  });
});

describe("serveAgentInfo", () => {
  it("takes a rudder agent's model from the environment, alias resolved, and the sandbox where bubblewrap is", async () => {
    const project = join(root, "project");
    const bubblewrap = (process.env.PATH ?? "")
      .split(delimiter)
      .some((folder) => folder !== "" && existsSync(join(folder, "bwrap")));
    const info = await serveAgentInfo({
      engine: "rudder",
      cwd: project,
      model: undefined,
      noSandbox: false,
      env: { ...env(), ANTHROPIC_API_KEY: "test-key", RUDDER_MODEL: "haiku" },
    });
    expect(info).toEqual({
      cwd: project,
      engine: "rudder",
      model: "claude-haiku-5-5",
      sandbox: bubblewrap,
    });
  });
});
