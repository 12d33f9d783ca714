import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ChannelSource, SourceDelivery } from "../../src/gateway/index.js";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { freeLoopbackPort } from "../helpers/free-port.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway, testFolders } from "./helpers.js";

const gateways: TestGateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.cleanup();
});

/** A chat adapter in miniature: it delivers what a test hands it and records its lifecycle. */
class RecordingSource implements ChannelSource {
  readonly name = "chat";
  started = false;
  stopped = false;
  deliver:
    | ((channelId: string, text: string, meta?: Record<string, unknown>) => Promise<SourceDelivery>)
    | undefined;

  async start(deliver: NonNullable<RecordingSource["deliver"]>): Promise<void> {
    this.started = true;
    this.deliver = deliver;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }
}

describe("inbound channel sources", () => {
  it("deliver through the same routing as the HTTP API and are stopped on close", async () => {
    const source = new RecordingSource();
    const gateway = await startTestGateway({ prefix: "source", sources: [source] });
    gateways.push(gateway);
    expect(source.started).toBe(true);
    const delivery = await source.deliver!("chat:42", "from the chat");
    expect(delivery.disposition).toBe("started");
    const messages = await waitFor(async () => {
      const all = await gateway.messages("chat:42");
      return all.some((message) => message.kind === "reply") ? all : undefined;
    }, "the chat message answered");
    expect(messages[0]).toMatchObject({ id: delivery.id, text: "from the chat", source: "chat" });
    await gateway.close();
    expect(source.stopped).toBe(true);
    await expect(source.deliver!("chat:42", "too late")).rejects.toThrow(/shutting down/);
  });

  it("keep the health a 503 'starting' until the gateway accepts messages", async () => {
    // A source slow to start (a chat adapter reaching its service): the server listens already.
    let release: () => void = () => {};
    const slow: ChannelSource = {
      name: "slow",
      start: () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
      stop: async () => {},
    };
    const port = await freeLoopbackPort();
    const starting = startTestGateway({ prefix: "slow-source", sources: [slow], port });
    const health = () => fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined);
    const early = await waitFor(health, "the server listening");
    expect(early.status).toBe(503);
    expect(early.headers.get("retry-after")).toBe("1");
    expect(await early.json()).toMatchObject({
      ok: false,
      error: expect.stringMatching(/starting/),
    });
    release();
    const gateway = await starting;
    gateways.push(gateway);
    const ready = await fetch(`${gateway.url}/api/health`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true });
  });

  it("agent processes inherit RUDDER_MAX_RETRIES, but not the Telegram bot token", async () => {
    const previous = process.env.RUDDER_MAX_RETRIES;
    const previousToken = process.env.RUDDER_TELEGRAM_TOKEN;
    process.env.RUDDER_MAX_RETRIES = "2";
    process.env.RUDDER_TELEGRAM_TOKEN = "4242:not-for-agents";
    const folders = testFolders("retries");
    const envFile = join(folders.dataDir, "..", "env");
    try {
      const withEnv = await startTestGateway({
        prefix: "retries",
        engine: { claudeBin: FAKE_CLAUDE_SWITCH, env: { GATEWAY_TEST_ENV_FILE: envFile } },
      });
      gateways.push(withEnv);
      await withEnv.api("POST", "/api/channels/env/messages", { text: "hi" });
      const line = await waitFor(() => {
        try {
          return readFileSync(envFile, "utf8").trim() || undefined;
        } catch {
          return undefined;
        }
      }, "the env report");
      expect(line).toBe(
        "RUDDER_MAX_RETRIES=2 CLAUDE_CODE_MAX_RETRIES=2 RUDDER_TELEGRAM_TOKEN=unset",
      );
    } finally {
      folders.remove();
      if (previous === undefined) delete process.env.RUDDER_MAX_RETRIES;
      else process.env.RUDDER_MAX_RETRIES = previous;
      if (previousToken === undefined) delete process.env.RUDDER_TELEGRAM_TOKEN;
      else process.env.RUDDER_TELEGRAM_TOKEN = previousToken;
    }
  });
});
