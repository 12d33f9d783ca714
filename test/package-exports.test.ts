import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/** Imports the built package by its own name, as a user's code would. */
function importNames(specifier: string): string[] {
  const script = `import(${JSON.stringify(specifier)}).then((m) => console.log(JSON.stringify(Object.keys(m))))`;
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: root,
    encoding: "utf8",
  });
  expect(result.stderr).toBe("");
  return JSON.parse(result.stdout) as string[];
}

describe("the package entry points", () => {
  it('exports the runner API from "rudder"', () => {
    expect(importNames("rudder")).toEqual(
      expect.arrayContaining([
        "ClaudeProcess",
        "RunnerRegistry",
        "ClaudeTimeoutError",
        "RateLimitError",
        "isRateLimitError",
        "getRegistry",
        "resetRegistryForTests",
      ]),
    );
  });

  it('exports the kernel from "rudder/agent" and the gateway from "rudder/gateway"', () => {
    expect(importNames("rudder/agent")).toEqual(
      expect.arrayContaining([
        "Session",
        "runAgentLoop",
        "createDefaultTools",
        "evaluatePermission",
      ]),
    );
    expect(importNames("rudder/gateway")).toEqual(
      expect.arrayContaining(["startGateway", "createGatewayClient"]),
    );
    expect(importNames("rudder/channels")).toEqual(
      expect.arrayContaining(["TelegramChannelSource", "telegramConfig"]),
    );
  });
});
