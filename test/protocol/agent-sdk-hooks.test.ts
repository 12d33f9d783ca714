import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { lastToolResults } from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { restoreEnvironmentAfterAll } from "../helpers/restore-environment.js";
import { loadAgentSdkQuery } from "./agent-sdk-loader.js";
import type { HookInput, QueryFunction, SDKMessage } from "./agent-sdk-types.js";
import { protocolHarness } from "./helpers.js";

restoreEnvironmentAfterAll();

// The Agent SDK's `hooks` option: the SDK registers its callbacks in `initialize`, and rudder
// calls them (`hook_callback`) from its own hook registry, as it runs command hooks.

const harness = protocolHarness();
afterEach(() => harness.cleanup());

let query: QueryFunction;

beforeAll(async () => {
  query = await loadAgentSdkQuery();
}, 300_000);

it("the SDK's hooks block a Bash call and add context to the prompt", async () => {
  const api = await harness.api([
    { toolUse: { name: "Bash", input: { command: "touch hooked.txt" } } },
    { text: "the hook said no" },
  ]);
  const sandbox = harness.sandbox(api);
  const seenInputs: HookInput[] = [];
  const seen: SDKMessage[] = [];
  for await (const message of query({
    prompt: "make a file",
    options: {
      pathToClaudeCodeExecutable: RUDDER_CLI,
      cwd: sandbox.workspace,
      env: sandbox.env,
      hooks: {
        UserPromptSubmit: [
          {
            hooks: [
              async (input) => {
                seenInputs.push(input);
                return {
                  hookSpecificOutput: {
                    hookEventName: "UserPromptSubmit",
                    additionalContext: "the user prefers haiku",
                  },
                };
              },
            ],
          },
        ],
        PreToolUse: [
          {
            matcher: "Bash",
            // The SDK sends the prompt only once rudder's initialize answer says it honours this.
            onFailure: "block",
            hooks: [
              async (input, toolUseID) => {
                seenInputs.push({ ...input, seen_tool_use_id: toolUseID });
                return {
                  hookSpecificOutput: {
                    hookEventName: "PreToolUse",
                    permissionDecision: "deny",
                    permissionDecisionReason: "no files today",
                  },
                };
              },
            ],
          },
        ],
      },
    },
  })) {
    seen.push(message);
  }

  expect(seen.at(-1)).toMatchObject({
    type: "result",
    is_error: false,
    result: "the hook said no",
  });
  expect(seenInputs).toMatchObject([
    { hook_event_name: "UserPromptSubmit", prompt: "make a file" },
    {
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "touch hooked.txt" },
      seen_tool_use_id: expect.any(String),
    },
  ]);
  expect(existsSync(join(sandbox.workspace, "hooked.txt"))).toBe(false);
  const [first, second] = api.mainRequests();
  expect(JSON.stringify(first?.body.messages)).toContain("the user prefers haiku");
  expect(second && lastToolResults(second)).toMatchObject([
    { content: expect.stringContaining("no files today"), is_error: true },
  ]);
});
