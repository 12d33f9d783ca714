/** Every agent command takes `--no-sandbox`: `rudder acp` too (run, chat and serve had it). */
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { startRudder } from "../helpers/rudder-cli.js";

describe("--no-sandbox", () => {
  it("is taken by rudder acp, which then ends with its client's stdin", async () => {
    const run = startRudder(["acp", "--no-sandbox"], { cwd: tmpdir(), env: process.env });
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.stderr()).not.toContain("unknown option");
  });
});
