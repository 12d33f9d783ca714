import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startRudder } from "../helpers/rudder-cli.js";

const root = mkdtempSync(join(tmpdir(), "rudder-serve-flags-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function serve(args: string[], env: NodeJS.ProcessEnv = {}) {
  const run = startRudder(["serve", "--data", join(root, "data"), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: root, ...env },
  });
  const { code } = await run.exited;
  return { code, stderr: run.stderr() };
}

describe("rudder serve refuses bad flags in one line", () => {
  it.each([
    [["--engine", "gpt"], "--engine must be rudder or claude"],
    [["--port", "http"], "--port needs a whole number"],
    [["--permission-timeout", "0"], "--permission-timeout needs a whole number of at least 1"],
    [["--max-live", "-1"], "--max-live"],
    [["--max-sse", "0"], "--max-sse needs a whole number of at least 1"],
    [["--max-sse-per-client", "many"], "--max-sse-per-client needs a whole number"],
    [["--header-timeout", "0"], "--header-timeout needs a whole number of at least 1"],
    [["--body-timeout", "soon"], "--body-timeout needs a whole number"],
    [["--shutdown-wait", "1.5"], "--shutdown-wait needs a whole number of at least 0"],
    [["--frobnicate"], "unknown option --frobnicate"],
    [
      ["--trust-proxy", "10.0.0.1,10.0.0.0/33"],
      '--trust-proxy: "10.0.0.0/33" is not an IP address, a CIDR such as 10.0.0.0/24, or "loopback"',
    ],
  ])("%j", async (args, message) => {
    const result = await serve(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain("    at ");
  });

  it("RUDDER_TRUST_PROXY, checked as --trust-proxy is", async () => {
    const result = await serve([], { RUDDER_TRUST_PROXY: "nginx.internal" });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      'rudder serve: --trust-proxy: "nginx.internal" is not an IP address, a CIDR such as 10.0.0.0/24, or "loopback"',
    );
  });
});
