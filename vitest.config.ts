import { defineConfig } from "vitest/config";

/**
 * Two lanes (vitest projects). `npm test` runs both; `npm run test:unit` runs only `unit`.
 *
 * - `unit`: the in-process tests, for the inner loop (well under a minute). A file belongs here
 *   when it starts no child process (no built CLI in dist/, no fake or real agent CLI, no shell
 *   command, no bubblewrap, no PostgreSQL, no browser, no tmux); loopback servers inside the test
 *   process (the fake Messages API, an in-process gateway with no agent) are fine.
 *   test/helpers/unit-lane-guard.ts fails a unit test that starts a process, naming it.
 * - `full`: every other test file. A new file lands here until it is listed below, so the fast
 *   lane never grows slow by accident; list an in-process file here to make it part of the
 *   inner loop.
 */
const unitTests = [
  "test/agent/compaction-transcript.test.ts",
  "test/agent/context-budget.test.ts",
  "test/agent/model-call.test.ts",
  "test/agent/prepare-tool-use-grammar.test.ts",
  "test/agent/project-instructions.test.ts",
  "test/agent/random-uuid.test.ts",
  "test/agent/session-catalog.test.ts",
  "test/ascii-source.test.ts",
  "test/channels/discord/discord-platform.test.ts",
  "test/channels/discord/discord-source.test.ts",
  "test/channels/kit/approval-grants.test.ts",
  "test/channels/kit/binding-access.test.ts",
  "test/channels/kit/chat-commands.test.ts",
  "test/channels/kit/inbound-deliveries.test.ts",
  "test/channels/kit/reply-outbox-listeners.test.ts",
  "test/channels/kit/reply-outbox-order.test.ts",
  "test/channels/kit/sent-files.test.ts",
  "test/channels/slack/slack-mrkdwn.test.ts",
  "test/channels/slack/slack-source.test.ts",
  "test/channels/telegram/telegram-api.test.ts",
  "test/channels/telegram/telegram-source.test.ts",
  "test/channels/telegram/telegram-text.test.ts",
  "test/chat/chat-format.test.ts",
  "test/chat/chat-renderer.test.ts",
  "test/claude-cli/attached-images.test.ts",
  "test/claude-cli/held-prompts.test.ts",
  "test/claude-cli/ndjson.test.ts",
  "test/claude-cli/said-text.test.ts",
  "test/claude-cli/text-rules.test.ts",
  "test/cli/sessions-cli.test.ts",
  "test/docs-cli-flags.test.ts",
  "test/docs-links.test.ts",
  "test/function-length.test.ts",
  "test/gateway/agent-info.test.ts",
  "test/gateway/agent-starts.test.ts",
  "test/gateway/lease-confirmations.test.ts",
  "test/gateway/permission-flood.test.ts",
  "test/gateway/process-pool-reap.test.ts",
  "test/gateway/bindings/gateway-config.test.ts",
  "test/gateway/budget-resets.test.ts",
  "test/gateway/event-bus.test.ts",
  "test/gateway/http-api.test.ts",
  "test/gateway/http-security.test.ts",
  "test/gateway/link-codes.test.ts",
  "test/gateway/media/inbox-file.test.ts",
  "test/gateway/media/sent-file-copies.test.ts",
  "test/gateway/message-route.test.ts",
  "test/gateway/store/connection-loss.test.ts",
  "test/gateway/store/group-commit.test.ts",
  "test/gateway/store/message-id.test.ts",
  "test/gateway/store/private-data-folder.test.ts",
  "test/gateway/stream-json-events.test.ts",
  "test/gateway/transcript-mirror.test.ts",
  "test/gateway/trusted-proxies.test.ts",
  "test/helper-hooks.test.ts",
  "test/hooks/json-hook-callback.test.ts",
  "test/hooks/matcher.test.ts",
  "test/import-cycles.test.ts",
  "test/layers.test.ts",
  "test/mcp/format-result.test.ts",
  "test/mcp/load-mcp-config.test.ts",
  "test/model/anthropic-model.test.ts",
  "test/model/demo-model.test.ts",
  "test/model/model-config.test.ts",
  "test/model/messages-client.test.ts",
  "test/model/retry-policy.test.ts",
  "test/model/server-sent-events.test.ts",
  "test/model/scripted-model.test.ts",
  "test/permissions/bypass-corpus.test.ts",
  "test/permissions/evaluate.test.ts",
  "test/permissions/git-version.test.ts",
  "test/permissions/mcp-rules.test.ts",
  "test/permissions/parse-rule.test.ts",
  "test/permissions/plain-command.test.ts",
  "test/permissions/split-command.test.ts",
  "test/protocol/line-splitter.test.ts",
  "test/protocol/line-writer.test.ts",
  "test/protocol/sdk-hooks.test.ts",
  "test/protocol/transcript-store.test.ts",
  "test/sandbox/domain-proxy.test.ts",
  "test/settings/settings.test.ts",
  "test/tools/byte-size.test.ts",
  "test/tools/default-tools.test.ts",
  "test/tools/edit-file-size.test.ts",
  "test/tools/file-tools.test.ts",
  "test/tools/glob-tool.test.ts",
  "test/tools/send-file-tool.test.ts",
  "test/tools/structured-patch.test.ts",
  "test/tools/workspace-path.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real processes and servers; two cores are shared, so keep
    // parallelism modest and give each file its own process.
    pool: "forks",
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: unitTests,
          setupFiles: ["test/helpers/unit-lane-guard.ts"],
          // In-process tests need no process of their own: threads that keep their loaded
          // modules between files take a third of the time forks do (a file must leave no
          // global state behind: fake timers and environment changes undone after each test).
          pool: "threads",
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "full",
          include: ["test/**/*.test.ts"],
          exclude: unitTests,
          // A worker process runs file after file, keeping its loaded modules: a new process and
          // its imports for each file cost about a quarter of the run. What a file leaves behind
          // (programs it started, the environment, fake timers) is undone or failed at its end.
          isolate: false,
          setupFiles: ["test/helpers/file-end-cleanup.ts"],
        },
      },
    ],
  },
});
