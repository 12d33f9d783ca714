import { expect, it } from "vitest";
import { parseSdkHooks } from "../../src/protocol/sdk-hooks.js";

it("parseSdkHooks reads the Agent SDK's initialize hooks and names entries it skips", () => {
  expect(
    parseSdkHooks({
      PreToolUse: [
        { matcher: "Bash", hookCallbackIds: ["hook_0", "hook_1"], timeout: 5, onFailure: "block" },
        { hookCallbackIds: ["hook_2"], timeout: -1 },
        { matcher: "Read" },
      ],
      Stop: "not a list",
    }),
  ).toEqual({
    callbacks: [
      {
        event: "PreToolUse",
        matcher: "Bash",
        callbackId: "hook_0",
        timeoutSeconds: 5,
        blockOnFailure: true,
      },
      {
        event: "PreToolUse",
        matcher: "Bash",
        callbackId: "hook_1",
        timeoutSeconds: 5,
        blockOnFailure: true,
      },
      {
        event: "PreToolUse",
        matcher: undefined,
        callbackId: "hook_2",
        timeoutSeconds: undefined,
        blockOnFailure: false,
      },
    ],
    problems: ["a hooks.PreToolUse entry has no hookCallbackIds", "hooks.Stop is not a list"],
  });
  expect(parseSdkHooks(undefined)).toEqual({ callbacks: [], problems: [] });
  expect(parseSdkHooks([1])).toEqual({ callbacks: [], problems: ["hooks is not an object"] });
});
