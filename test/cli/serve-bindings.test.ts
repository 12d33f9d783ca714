/**
 * `rudder serve --config`: two bindings, two folders, two engines (rudder and the real Claude
 * Code CLI), two models, each channel answered from its binding's place (the fake Messages API
 * has the agent run `pwd` and answers with what it printed and the model the request named);
 * `/status` and `/model`; the file reloaded in the middle of a turn (the turn ends as it began,
 * the next one uses the new binding); a bad file refused with its line, at start and on reload.
 * One gateway for the file.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeCodeBinary, claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type RudderRun, runRudder, startRudder, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

let root = "";
let alpha = "";
let beta = "";
let configPath = "";
let api: FakeMessagesApi;
let serve: RudderRun;
let url = "";
let token = "";
let openGate: () => void = () => {};

/** What a tool result said, as text. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((block: { text?: unknown }) => String(block.text ?? "")).join("");
  }
  return "";
}

/**
 * Asked where it is, the agent runs `pwd` (the bash tool of its engine); told what `pwd`
 * printed, it answers `at <folder> as <model>`. A request saying "hold" waits for the gate.
 */
function fallback(request: RecordedRequest): ScriptStep {
  const results = lastToolResults(request);
  if (results.length > 0) {
    return { text: `at ${resultText(results[0]?.content).trim()} as ${request.body.model}` };
  }
  const tools: Array<{ name: string }> = request.body.tools ?? [];
  const bash = tools.find((tool) => tool.name.toLowerCase() === "bash")?.name ?? "bash";
  const pwd: ScriptStep = {
    toolUse: { name: bash, input: { command: "pwd", description: "pwd" } },
  };
  const text = lastUserText(request);
  if (text.includes("hold")) {
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    return { until: gate, answer: pwd };
  }
  return text.includes("where") ? pwd : { text: "fine" };
}

function config(alphaModel: string): unknown {
  return {
    defaults: { engine: "rudder" },
    bindings: [
      {
        name: "alpha",
        match: ["web:alpha-*"],
        cwd: alpha,
        engine: "rudder",
        model: alphaModel,
        models: ["model-alpha-2"],
      },
      {
        name: "beta",
        match: ["web:beta-*"],
        cwd: beta,
        engine: "claude",
        model: "model-beta",
        systemPrompt: "BETA-PROMPT: you work on beta.",
        settings: { permissions: { allow: ["Bash(pwd)"] } },
      },
    ],
  };
}

/** Replaces the file at once (a rename), as editors do. */
function writeConfig(content: unknown): void {
  const staged = `${configPath}.new`;
  writeFileSync(staged, typeof content === "string" ? content : JSON.stringify(content));
  renameSync(staged, configPath);
}

async function call<T>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

interface Message {
  kind: string;
  text: string;
  state: string | null;
}

/** Sends `text` to the channel and resolves with the answer to it (a reply or an error). */
async function ask(channelId: string, text: string): Promise<Message> {
  const sent = await call<{ id: string }>("POST", `/api/channels/${channelId}/messages`, { text });
  expect(sent.status).toBe(202);
  return waitFor(
    async () => {
      const listed = await call<{ messages: Array<Message & { replyTo: string | null }> }>(
        "GET",
        `/api/channels/${channelId}/messages`,
      );
      return listed.body.messages.find((message) => message.replyTo === sent.body.id);
    },
    `the answer to "${text}" in ${channelId}`,
    90_000,
  );
}

beforeAll(async () => {
  const claudeBin = claudeCodeBinary();
  root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-ws-bindings-")));
  alpha = join(root, "alpha");
  beta = join(root, "beta");
  for (const folder of [alpha, beta, join(root, "home"), join(root, "data")]) mkdirSync(folder);
  configPath = join(root, "config.json");
  writeConfig(config("model-alpha"));
  api = await startFakeMessagesApi({ fallback });
  serve = startRudder(
    ["serve", "--port", "0", "--data", join(root, "data"), "--config", configPath, "--no-sandbox"],
    {
      cwd: root,
      env: {
        ...claudeCodeEnv(join(root, "home"), api.url),
        RUDDER_CLAUDE_BIN: claudeBin,
        RUDDER_MAX_RETRIES: "0",
      },
    },
  );
  await waitFor(() => /one-time link\): (\S+)/.test(serve.stdout()), "the one-time link", 30_000);
  url = (/one-time link\): (\S+)/.exec(serve.stdout())?.[1] ?? "").replace(/\/#code=.*/, "");
  token = execFileSync("cat", [join(root, "data", "token")], { encoding: "utf8" }).trim();
}, 300_000);

afterAll(async () => {
  openGate();
  if (serve) await stopRudder(serve);
  await api?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("rudder serve --config", () => {
  it("answers each binding's channels from its folder, with its engine and model", async () => {
    expect(serve.stdout()).toContain(
      `binding alpha (web:alpha-*): ${alpha} (engine rudder, model model-alpha, sandbox off)\n`,
    );
    expect(serve.stdout()).toContain(
      `binding beta (web:beta-*): ${beta} (engine claude, model model-beta, sandbox off)\n`,
    );
    const [fromAlpha, fromBeta] = await Promise.all([
      ask("web:alpha-1", "where are you?"),
      ask("web:beta-1", "where are you?"),
    ]);
    expect(fromAlpha).toMatchObject({ kind: "reply", text: `at ${alpha} as model-alpha` });
    expect(fromBeta).toMatchObject({ kind: "reply", text: `at ${beta} as model-beta` });
    // Claude Code's requests carry the binding's addition to the system prompt.
    const betaRequests = api
      .mainRequests()
      .filter((request) => JSON.stringify(request.body.system).includes("BETA-PROMPT"));
    expect(betaRequests.length).toBeGreaterThan(0);
    expect(new Set(betaRequests.map((request) => request.body.model))).toEqual(
      new Set(["model-beta"]),
    );

    const channels = await call<{ channels: Array<{ id: string; binding: string }> }>(
      "GET",
      "/api/channels",
    );
    expect(channels.body.channels.map((channel) => [channel.id, channel.binding]).sort()).toEqual([
      ["web:alpha-1", "alpha"],
      ["web:beta-1", "beta"],
    ]);
    const bindings = await call<{ bindings: Array<{ name: string; cwd: string; engine: string }> }>(
      "GET",
      "/api/bindings",
    );
    expect(bindings.body.bindings.map(({ name, cwd, engine }) => [name, cwd, engine])).toEqual([
      ["alpha", alpha, "rudder"],
      ["beta", beta, "claude"],
      ["defaults", root, "rudder"],
    ]);
  });

  it("answers /status and switches the model with /model within the binding's list", async () => {
    const status = await ask("web:beta-1", "/status");
    expect(status.kind).toBe("reply");
    expect(status.text).toContain(
      `Binding: beta\nFolder: ${beta}\nEngine: claude\nModel: model-beta\nSandbox: off\nContext: `,
    );
    const refused = await call<{ error: string }>("POST", "/api/channels/web:alpha-1/model", {
      model: "model-x",
    });
    expect(refused).toEqual({
      status: 400,
      body: {
        error: 'the binding "alpha" allows the models model-alpha, model-alpha-2, not "model-x"',
      },
    });
    const switched = await ask("web:alpha-1", "/model model-alpha-2");
    expect(switched).toMatchObject({
      kind: "reply",
      text: "Model: model-alpha-2 from the next turn on.",
    });
    expect(await ask("web:alpha-1", "where now?")).toMatchObject({
      text: `at ${alpha} as model-alpha-2`,
    });
    const overHttp = await call<{ status: { binding: string; model: string } }>(
      "GET",
      "/api/channels/web:alpha-1/status",
    );
    expect(overHttp.body.status).toMatchObject({ binding: "alpha", model: "model-alpha-2" });
  });

  it("reloads the file mid-turn: the turn ends as it began, the next uses the new binding", async () => {
    const held = ask("web:alpha-2", "hold: where are you?");
    await waitFor(
      () => api.mainRequests().some((request) => lastUserText(request).includes("hold")),
      "the held request",
      30_000,
    );
    writeConfig(config("model-alpha-3"));
    await waitFor(
      () => serve.stderr().includes("gateway: configuration reloaded from"),
      "the reload",
      10_000,
    );
    openGate();
    expect(await held).toMatchObject({ text: `at ${alpha} as model-alpha` });
    expect(await ask("web:alpha-2", "where next?")).toMatchObject({
      text: `at ${alpha} as model-alpha-3`,
    });
    expect(serve.stderr()).toContain("gateway: web:alpha-2's agent restarts");

    writeConfig({ bindings: [{ name: "alpha", match: ["web:alpha-*"], engine: "gpt" }] });
    await waitFor(
      () => serve.stderr().includes("configuration not reloaded"),
      "the refusal",
      10_000,
    );
    expect(serve.stderr()).toContain(
      `gateway: configuration not reloaded, the previous one stays: ${configPath}: bindings[0].engine must be "rudder" or "claude"`,
    );
    const bindings = await call<{ bindings: Array<{ name: string; model: string }> }>(
      "GET",
      "/api/bindings",
    );
    expect(bindings.body.bindings[0]).toMatchObject({ name: "alpha", model: "model-alpha-3" });
  });

  it("refuses to start on a bad file, naming the file and the key", async () => {
    const bad = join(root, "bad.json");
    writeFileSync(bad, JSON.stringify({ bindings: [{ name: "x", match: ["*"], cwd: 3 }] }));
    const run = await runRudder(
      ["serve", "--port", "0", "--data", join(root, "data2"), "--config", bad],
      {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: join(root, "home") },
      },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`rudder serve: ${bad}: bindings[0].cwd must be a folder\n`);
  });
});
