/**
 * A Claude CLI (the fake one) writing a 20 MB reply, over the runner's 16 MiB line cap: the turn
 * must fail at once with a clear error, not wait for the turn timeout, and the channel go on.
 */
import { join } from "node:path";
import type { ApiMessage } from "../../test/gateway/helpers.js";
import { GatewayProcess } from "../gateway-process.js";
import { type Figure, figure, poll } from "./figures.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "..", "test", "fixtures", "fake-claude");

export async function overCapLine(root: string): Promise<Figure[]> {
  const gateway = await GatewayProcess.start({
    dataDir: join(root, "over-cap"),
    port: 0,
    engine: { claudeBin: FAKE_CLAUDE, env: { FAKE_CLAUDE_SCENARIO: "over_cap_line" } },
  });
  const scenario = "20 MB line from a Claude CLI";
  try {
    const list = async () =>
      (await gateway.api<{ messages: ApiMessage[] }>("GET", "/api/channels/cap/messages")).body
        .messages;
    const started = Date.now();
    const first = await gateway.api<{ id: string }>("POST", "/api/channels/cap/messages", {
      text: "write me a novel",
    });
    const failed = await poll(async () => {
      const messages = await list();
      return messages.find((message) => message.replyTo === first.body.id);
    }, 120_000);
    const seconds = (Date.now() - started) / 1000;
    const second = await gateway.api<{ id: string }>("POST", "/api/channels/cap/messages", {
      text: "a short one then",
    });
    const answered = await poll(async () => {
      const messages = await list();
      return messages.find((message) => message.id === second.body.id)?.state === "answered";
    }, 60_000);
    // The channel's error names what happened in words (the result's subtype stays in the stream).
    const clear = failed?.kind === "error" && failed.text.includes("longer than the runner's cap");
    return [
      figure(
        scenario,
        "turn failed, saying the line was over the cap",
        clear ? "yes" : "no",
        "yes",
        clear,
      ),
      figure(
        scenario,
        "seconds to the error (turn timeout 600)",
        seconds.toFixed(1),
        "< 30",
        seconds < 30,
      ),
      figure(
        scenario,
        "the next message answered",
        answered ? "yes" : "no",
        "yes",
        answered === true,
      ),
    ];
  } finally {
    await gateway.stop();
  }
}
