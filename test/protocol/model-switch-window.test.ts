import { afterEach, expect, it } from "vitest";
import { type Line, protocolHarness, STREAM_ARGS } from "./helpers.js";

// After `set_model`, the context window (and so when the conversation compacts) is the new
// model's: `modelUsage[model].contextWindow` in each result says which window was in use.

const harness = protocolHarness();
afterEach(() => harness.cleanup());

const windowOf = (result: Line, model: string) => result.modelUsage?.[model]?.contextWindow;

it("a switched model brings its own context window", async () => {
  const api = await harness.api([{ text: "first" }, { text: "second" }, { text: "third" }]);
  const child = harness.start(harness.sandbox(api), [
    ...STREAM_ARGS,
    "--model",
    "claude-sonnet-4-5",
  ]);
  child.sendUser("hello");
  expect(windowOf(await child.waitForResult(1), "claude-sonnet-4-5")).toBe(200_000);

  child.send({
    type: "control_request",
    request_id: "switch-1",
    request: { subtype: "set_model", model: "claude-opus-5-5" },
  });
  const answer = await child.waitFor(
    (line) => line.type === "control_response" && line.response?.request_id === "switch-1",
  );
  expect(answer.response.subtype).toBe("success");
  child.sendUser("and now?");
  expect(windowOf(await child.waitForResult(2), "claude-opus-5-5")).toBe(1_000_000);

  child.send({
    type: "control_request",
    request_id: "switch-2",
    request: { subtype: "set_model", model: "default" },
  });
  await child.waitFor(
    (line) => line.type === "control_response" && line.response?.request_id === "switch-2",
  );
  child.sendUser("back?");
  expect(windowOf(await child.waitForResult(3), "claude-sonnet-4-5")).toBe(200_000);
  child.end();
  expect(await child.exited).toBe(0);
});
