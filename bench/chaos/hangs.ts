/**
 * Stalls and hangs, bounded and told: a gateway of rudder agents (the model a fake Messages
 * API) whose bounds are 2 s (`RUDDER_STREAM_IDLE_TIMEOUT_MS`, `MCP_TOOL_TIMEOUT`, a hook's
 * `timeout`), `channels` channels per case at once: a model stream that stalls after its first
 * delta, one never answered, an MCP tool that hangs, a hook that hangs, an MCP server that dies
 * mid-call. Each message must end (failed in plain words, or answered) within the bound's
 * shape (a stall is tried twice) rather than the 600 s a turn may take; the hook's timeout must
 * be told on the channel and in the log; the restarted server must be told to the model; and
 * each channel must answer its next message.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type FakeMessagesApi,
  lastToolResults,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../../test/helpers/fake-messages-api.js";
import { GatewayProcess } from "../gateway-process.js";
import { type Figure, figure } from "./figures.js";
import { settle } from "./rudder-agents.js";

const BOUND_MS = 2000;
/** A stall costs two bounds (4 s); the rest is the agents' and the gateway's work on 2 busy cores. */
const GOAL_SECONDS = 20;
const CASES = ["stall-delta", "stall-silent", "mcp-hang", "hook", "restart"] as const;
const FAKE_MCP_SERVER = join(
  import.meta.dirname,
  "..",
  "..",
  "test",
  "fixtures",
  "fake-mcp-server.mjs",
);
const RUDDER_BIN = join(import.meta.dirname, "..", "..", "test", "fixtures", "rudder-bin");

function resultText(request: RecordedRequest): string {
  return lastToolResults(request)
    .map(({ content }) =>
      typeof content === "string"
        ? content
        : Array.isArray(content)
          ? content.map((block: { text?: unknown }) => String(block?.text ?? "")).join("")
          : "",
    )
    .join("\n");
}

/** The fake model's part in each case, by the `[case: ...]` of the channel's first message. */
function answer(request: RecordedRequest): ScriptStep {
  const said = JSON.stringify(request.body?.messages ?? []);
  const done = said.split('"tool_result"').length - 1;
  if (said.includes("next message") || !said.includes("[case:")) return { text: "still here" };
  if (said.includes("[case: stall-delta]")) return { hangUntilAborted: true, text: "Thinking" };
  if (said.includes("[case: stall-silent]")) return { neverAnswer: true };
  if (said.includes("[case: mcp-hang]") && done === 0) {
    return { toolUse: { name: "mcp__fake__hang", input: {} } };
  }
  if (said.includes("[case: hook]") && done === 0) {
    return { toolUse: { name: "mcp__fake__add", input: { a: 2, b: 3 } } };
  }
  if (said.includes("[case: restart]") && done < 2) {
    const name = done === 0 ? "mcp__fake__crash" : "mcp__fake__echo";
    return { toolUse: { name, input: { text: "again" } } };
  }
  return { text: `The tool said: ${resultText(request)}` };
}

async function start(
  root: string,
): Promise<{ gateway: GatewayProcess; api: FakeMessagesApi; close(): Promise<void> }> {
  const api = await startFakeMessagesApi({ fallback: answer, keepBodies: false });
  const workspace = join(root, "hangs", "workspace");
  mkdirSync(join(workspace, ".rudder"), { recursive: true });
  writeFileSync(
    join(workspace, ".mcp.json"),
    JSON.stringify({
      mcpServers: { fake: { command: process.execPath, args: [FAKE_MCP_SERVER] } },
    }),
  );
  writeFileSync(
    join(workspace, ".rudder", "settings.json"),
    JSON.stringify({
      permissions: { allow: ["mcp__fake"] },
      hooks: {
        PreToolUse: [
          {
            matcher: "mcp__fake__add",
            hooks: [{ type: "command", command: "exec sleep 60", timeout: BOUND_MS / 1000 }],
          },
        ],
      },
    }),
  );
  const gateway = await GatewayProcess.start({
    dataDir: join(root, "hangs", "data"),
    port: 0,
    engine: {
      claudeBin: RUDDER_BIN,
      cwd: workspace,
      args: ["--include-hook-events"],
      env: {
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: "dummy",
        RUDDER_HOME: join(root, "hangs", "rudder-home"),
        RUDDER_MAX_RETRIES: "1",
        RUDDER_STREAM_IDLE_TIMEOUT_MS: String(BOUND_MS),
        MCP_TOOL_TIMEOUT: String(BOUND_MS),
      },
    },
  });
  return {
    gateway,
    api,
    close: async () => {
      await gateway.stop();
      await api.close();
    },
  };
}

interface Ended {
  name: (typeof CASES)[number];
  state: string;
  text: string;
  seconds: number;
  next: string;
}

export async function hangs(root: string, channels: number): Promise<Figure[]> {
  const setup = await start(root);
  const scenario = `stalls and hangs (bounds 2 s, ${channels} channels each)`;
  try {
    const { gateway } = setup;
    const ended: Ended[] = [];
    // Case after case, its channels at once, each channel's agent started first (a warm-up
    // message), so the figures time the hang and not agents starting on a loaded machine.
    for (const name of CASES) {
      const runs = Array.from({ length: channels }, async (_, index): Promise<Ended> => {
        const channel = `${name}-${index}`;
        await settle(gateway, channel, "warm up", 60_000);
        const started = Date.now();
        const result = await settle(gateway, channel, `[case: ${name}] go`, 120_000);
        const seconds = (Date.now() - started) / 1000;
        const next = await settle(gateway, channel, "next message", 60_000);
        const text = result.reply?.text ?? "";
        return { name, state: result.state, text, seconds, next: next.state };
      });
      ended.push(...(await Promise.all(runs)));
    }
    const of = (name: Ended["name"]) => ended.filter((each) => each.name === name);
    const count = (name: Ended["name"], test: (each: Ended) => boolean) =>
      `${of(name).filter(test).length}/${channels}`;
    const slowest = (name: Ended["name"]) => Math.max(...of(name).map((each) => each.seconds));
    const stalled = (each: Ended) =>
      each.state === "failed" && /sent nothing for 2 s on each of 2 tries; rudder/.test(each.text);
    const all = `${channels}/${channels}`;
    const log = gateway.stderrTail;
    const rows: Array<[string, string, boolean]> = [
      [
        "stream stalls after its first delta: failed in plain words",
        count("stall-delta", stalled),
        true,
      ],
      ["request never answered: failed in plain words", count("stall-silent", stalled), true],
      [
        "hung MCP tool: a tool error, then answered",
        count(
          "mcp-hang",
          (each) =>
            each.state === "answered" &&
            each.text.includes("did not answer the call to hang within 2 s"),
        ),
        true,
      ],
      [
        "hook past its timeout: answered, and in the log",
        count("hook", (each) => each.state === "answered") +
          (log.includes('hook "exec sleep 60" timed out after 2s') ? ", logged" : ", not logged"),
        log.includes('hook "exec sleep 60" timed out after 2s'),
      ],
      [
        "MCP server died: started again, the model told",
        count(
          "restart",
          (each) =>
            each.state === "answered" &&
            each.text.includes("had stopped (it exited with status 5)"),
        ),
        true,
      ],
    ];
    const figures = rows.map(([name, value, extra]) => {
      const ok = value.startsWith(`${all}`) && extra;
      return figure(scenario, name, value, `${all}`, ok);
    });
    const worst = Math.max(...CASES.map(slowest));
    figures.push(
      figure(
        scenario,
        "slowest s to the end: stall, silent, MCP, hook, restart",
        CASES.map((name) => slowest(name).toFixed(1)).join(", "),
        `< ${GOAL_SECONDS} (was 600)`,
        worst < GOAL_SECONDS,
      ),
      figure(
        scenario,
        "channels answering their next message",
        `${ended.filter((each) => each.next === "answered").length}/${ended.length}`,
        `${ended.length}/${ended.length}`,
        ended.every((each) => each.next === "answered"),
      ),
    );
    return figures;
  } finally {
    await setup.close();
  }
}
