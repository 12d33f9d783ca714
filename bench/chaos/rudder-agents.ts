/**
 * Faults of a rudder agent under the gateway (each agent `rudder run` in stream-json mode, the
 * model a fake Messages API on loopback): the agent SIGKILLed while a tool runs, a tool
 * flooding its output, a 20 MB model reply.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ApiMessage } from "../../test/gateway/helpers.js";
import {
  echoFallback,
  type FakeMessagesApi,
  type ScriptStep,
  startFakeMessagesApi,
} from "../../test/helpers/fake-messages-api.js";
import { processesMatching } from "../../test/helpers/process-scan.js";
import { isAlive } from "../../test/helpers/process-state.js";
import { GatewayProcess, residentMiB } from "../gateway-process.js";
import { type Figure, figure, mib, poll } from "./figures.js";

const RUDDER_BIN = join(import.meta.dirname, "..", "..", "test", "fixtures", "rudder-bin");

interface RudderGateway {
  gateway: GatewayProcess;
  api: FakeMessagesApi;
  workspace: string;
  close(): Promise<void>;
}

export async function rudderGateway(
  root: string,
  name: string,
  script: ScriptStep[],
): Promise<RudderGateway> {
  const api = await startFakeMessagesApi({ script, fallback: echoFallback });
  const workspace = join(root, name, "workspace");
  mkdirSync(workspace, { recursive: true });
  const gateway = await GatewayProcess.start({
    dataDir: join(root, name, "data"),
    port: 0,
    engine: {
      claudeBin: RUDDER_BIN,
      cwd: workspace,
      env: {
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: "dummy",
        RUDDER_HOME: join(root, name, "rudder-home"),
      },
    },
  });
  return {
    gateway,
    api,
    workspace,
    close: async () => {
      await gateway.stop();
      await api.close();
    },
  };
}

async function messages(gateway: GatewayProcess, channel: string): Promise<ApiMessage[]> {
  return (await gateway.api<{ messages: ApiMessage[] }>("GET", `/api/channels/${channel}/messages`))
    .body.messages;
}

/** Posts `text` and waits until it is answered or failed; its record and the channel's messages. */
export async function settle(
  gateway: GatewayProcess,
  channel: string,
  text: string,
  timeoutMs = 120_000,
) {
  const posted = await gateway.api<{ id: string }>("POST", `/api/channels/${channel}/messages`, {
    text,
  });
  const all = await poll(async () => {
    const list = await messages(gateway, channel);
    const state = list.find((message) => message.id === posted.body.id)?.state;
    return state === "answered" || state === "failed" ? list : undefined;
  }, timeoutMs);
  const list = all ?? (await messages(gateway, channel));
  const message = list.find((each) => each.id === posted.body.id);
  const reply = list.find((each) => each.replyTo === posted.body.id);
  return { state: message?.state ?? "unknown", reply, list };
}

async function agentPid(gateway: GatewayProcess, channel: string): Promise<number | undefined> {
  const { body } = await gateway.api<{ runners: { channelId: string; pid: number | null }[] }>(
    "GET",
    "/api/runners",
  );
  return body.runners.find((runner) => runner.channelId === channel)?.pid ?? undefined;
}

/** The agent SIGKILLed while its bash tool sleeps before writing a file. */
export async function agentKilledMidTool(root: string): Promise<Figure[]> {
  const marker = "sleep 3.217";
  const setup = await rudderGateway(root, "agent-kill", [
    { toolUse: { name: "Bash", input: { command: `${marker}; echo late > late-effect.txt` } } },
    { text: "unused: the agent is killed before this" },
  ]);
  const scenario = "agent SIGKILL mid-tool";
  try {
    const { gateway, api, workspace } = setup;
    const posted = settle(gateway, "kill", "run the slow tool");
    const toolPids = await poll(() => {
      const pids = processesMatching(marker);
      return pids.length > 0 ? pids : undefined;
    }, 60_000);
    const pid = await agentPid(gateway, "kill");
    if (pid !== undefined) process.kill(pid, "SIGKILL");
    const first = await posted;
    // The file is written by the tool's own shell after its sleep: once every process of the
    // tool is gone, nothing is left to write it (a process left alive is counted below).
    await poll(() => (toolPids ?? []).every((each) => !isAlive(each)), 10_000);
    const left = (toolPids ?? []).filter((each) => isAlive(each)).length;
    const late = existsSync(join(workspace, "late-effect.txt")) ? 1 : 0;
    const next = await settle(gateway, "kill", "what happened to the tool?");
    const told = JSON.stringify(api.mainRequests().at(-1)?.body.messages ?? []);
    const started = toolPids !== undefined;
    return [
      figure(scenario, "the tool was running when killed", started ? "yes" : "no", "yes", started),
      figure(scenario, "tool processes left after the kill", left, "0", left === 0),
      figure(scenario, "late side effects (file written after the kill)", late, "0", late === 0),
      figure(
        scenario,
        "the message: failed with the error shown",
        first.state,
        "failed",
        first.state === "failed",
      ),
      figure(
        scenario,
        "the next message answered",
        next.state,
        "answered",
        next.state === "answered",
      ),
      figure(
        scenario,
        'model told "Result unknown" (not "interrupted")',
        told.includes("Result unknown") ? "yes" : "no",
        "yes",
        told.includes("Result unknown"),
      ),
    ];
  } finally {
    await setup.close();
  }
}

/** "yes" when the last model request carries a tool result that is not an error. */
function toolRan(api: FakeMessagesApi): "yes" | "no" {
  const messages = api.mainRequests().at(-1)?.body.messages ?? [];
  const results = messages.flatMap((message: { content: unknown }) =>
    Array.isArray(message.content) ? message.content : [],
  );
  return results.some(
    (block: { type?: string; is_error?: boolean }) =>
      block.type === "tool_result" && block.is_error !== true,
  )
    ? "yes"
    : "no";
}

/** Samples the resident memory of the gateway and the channel's agent until `done` settles. */
async function peakRss(gateway: GatewayProcess, channel: string, done: Promise<unknown>) {
  let gatewayPeak = 0;
  let agentPeak = 0;
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  while (!finished) {
    gatewayPeak = Math.max(gatewayPeak, residentMiB(gateway.pid));
    const pid = await agentPid(gateway, channel);
    if (pid) agentPeak = Math.max(agentPeak, residentMiB(pid));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { gatewayPeak, agentPeak };
}

/** A bash tool printing `megabytes` MB; the turn must end, with memory bounded. */
export async function toolOutputFlood(root: string, megabytes: number): Promise<Figure[]> {
  const setup = await rudderGateway(root, "tool-flood", [
    {
      toolUse: {
        name: "Bash",
        input: { command: `head -c ${megabytes}000000 /dev/zero | tr '\\0' y` },
      },
    },
    { text: "The flood is over." },
  ]);
  const scenario = `tool output flood (${megabytes} MB)`;
  try {
    const { gateway } = setup;
    await settle(gateway, "flood", "warm up");
    const before = residentMiB(gateway.pid);
    const running = settle(gateway, "flood", "flood the output");
    const peaks = await peakRss(gateway, "flood", running);
    const result = await running;
    const ran = toolRan(setup.api);
    return [
      figure(scenario, "the message", result.state, "answered", result.state === "answered"),
      figure(scenario, "the tool ran (its output reached the model)", ran, "yes", ran === "yes"),
      figure(scenario, "gateway RSS before / peak", `${mib(before)} / ${mib(peaks.gatewayPeak)}`),
      figure(scenario, "agent peak RSS", mib(peaks.agentPeak)),
    ];
  } finally {
    await setup.close();
  }
}

/** A 20 MB model reply: answered, its stored copy cut with a note, no line over the cap. */
export async function longReply(root: string, megabytes: number): Promise<Figure[]> {
  const reply = `START ${"long reply. ".repeat(Math.round((megabytes * 1e6) / 12))} END`;
  const setup = await rudderGateway(root, "long-reply", [{ text: reply, chunks: 1 }]);
  const scenario = `${megabytes} MB model reply`;
  try {
    const { gateway } = setup;
    const started = Date.now();
    const running = settle(gateway, "long", "write at length");
    const peaks = await peakRss(gateway, "long", running);
    const result = await running;
    const seconds = (Date.now() - started) / 1000;
    const stored = result.reply?.text ?? "";
    return [
      figure(scenario, "the message", result.state, "answered", result.state === "answered"),
      figure(scenario, "seconds to the answer", seconds.toFixed(1)),
      figure(
        scenario,
        "stored reply (cut, with a note)",
        `${Math.round(stored.length / 1024)} KiB`,
        "< 1024 KiB",
        stored.length < 2 ** 20 && stored.includes("more characters not shown"),
      ),
      figure(
        scenario,
        "gateway / agent peak RSS",
        `${mib(peaks.gatewayPeak)} / ${mib(peaks.agentPeak)}`,
      ),
    ];
  } finally {
    await setup.close();
  }
}
