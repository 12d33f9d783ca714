import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";
import { protocolHarness, STREAM_ARGS } from "../protocol/helpers.js";

/**
 * rudder reaps its MCP servers before it exits, whichever way it ends: a server it leaves
 * running is orphaned, and one that dies after rudder is a zombie under PID 1, which here (as
 * in many containers) never reaps it. So the server's pid must be gone once rudder has exited.
 */
const harness = protocolHarness();
afterEach(() => harness.cleanup());

/** Gone entirely: neither running nor a zombie (a zombie keeps its /proc entry). */
function pidGone(pid: number): boolean {
  return !existsSync(`/proc/${pid}`);
}

const ENDINGS = [
  { how: "SIGTERM", signal: "SIGTERM" as const, serverArgs: [], code: 143 },
  { how: "SIGINT", signal: "SIGINT" as const, serverArgs: [], code: 130 },
  {
    how: "SIGTERM, a server that ignores it",
    signal: "SIGTERM" as const,
    serverArgs: ["--ignore-sigterm"],
    code: 143,
  },
  { how: "the end of its input", signal: undefined, serverArgs: [], code: 0 },
];

describe("rudder's MCP servers when rudder ends", () => {
  it.each(ENDINGS)(
    "are reaped on $how",
    async ({ signal, serverArgs, code }) => {
      const api = await harness.api([]);
      const sandbox = harness.sandbox(api);
      const pidFile = join(sandbox.workspace, "server.pids");
      const config = {
        mcpServers: {
          fake: {
            command: process.execPath,
            args: [FAKE_MCP_SERVER, "--pid-file", pidFile, ...serverArgs],
          },
        },
      };
      const rudder = harness.start(sandbox, [
        ...STREAM_ARGS,
        "--mcp-config",
        JSON.stringify(config),
      ]);
      rudder.send({
        type: "control_request",
        request_id: "init",
        request: { subtype: "initialize" },
      });
      await rudder.waitFor((line) => line.type === "control_response");
      // initialize answers once the servers run (they start before the first turn).
      rudder.sendUser("hello");
      await rudder.waitForResult();
      const serverPid = Number(readFileSync(pidFile, "utf8").trim().split("\n")[0]);
      expect(pidGone(serverPid)).toBe(false);

      if (signal === undefined) rudder.end();
      else process.kill(rudder.child.pid as number, signal);
      expect(await rudder.exited).toBe(code);
      expect(pidGone(serverPid)).toBe(true);
    },
    30_000,
  );
});
