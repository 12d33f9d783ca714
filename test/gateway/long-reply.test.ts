/**
 * A model reply of several MB through the gateway with rudder as the engine: the rudder child
 * writes it in pieces under the 1 MiB line budget, so the runner reads every line (no
 * `output_error`), the message is answered, and the stored reply is the reply's head with a note
 * of what was cut. Three pieces show the split as well as twenty would: the 20 MB reply (past
 * the runner's 16 MiB line cap) is `npm run chaos`'s "20 MB model reply".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { MAX_OUTPUT_LINE_BYTES } from "../../src/protocol/line-writer.js";
import { echoFallback, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { openEvents, startRudderGateway, type TestGateway } from "./helpers.js";

let gateway: TestGateway | undefined;
let workspace: string | undefined;

afterEach(async () => {
  await gateway?.cleanup();
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

it("answers a 3 MB reply from a rudder agent: every line read, the reply kept with a note", async () => {
  const reply = `START ${"long reply. ".repeat(260_000)} END`;
  const api = await startFakeMessagesApi({
    script: [{ text: reply, chunks: 1 }],
    fallback: echoFallback,
  });
  workspace = mkdtempSync(join(tmpdir(), "rudder-long-reply-"));
  try {
    gateway = await startRudderGateway({
      prefix: "long-reply",
      apiUrl: api.url,
      workspace,
    });
    const events = openEvents(`${gateway.url}/api/channels/long/events?token=${gateway.token}`);
    const posted = await gateway.api<{ id: string }>("POST", "/api/channels/long/messages", {
      text: "write at length",
    });
    const messages = await waitFor(
      async () => {
        const list = await gateway?.messages("long");
        const state = list?.find((message) => message.id === posted.body.id)?.state;
        return state === "answered" || state === "failed" ? list : undefined;
      },
      "the long reply settled",
      60_000,
    );
    expect(messages.find((message) => message.id === posted.body.id)?.state).toBe("answered");
    const stored = messages.find((message) => message.kind === "reply");
    expect(stored?.text.startsWith("START long reply.")).toBe(true);
    expect(stored?.text).toMatch(/\[rudder: \d+ more characters not shown/);
    expect(stored?.text.length).toBeLessThan(1024 * 1024);

    // The page saw the whole text as it streamed, in pieces, and no line was lost.
    const streamed = await events.waitFor(
      (event) => event.data.type === "turn_end",
      "the turn_end event",
    );
    expect(streamed).toBeDefined();
    const deltas = events.events.filter((event) => event.data.type === "text_delta");
    // In pieces, each within the line budget, as the rudder child wrote them.
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    for (const delta of deltas) {
      expect(String(delta.data.text).length).toBeLessThan(MAX_OUTPUT_LINE_BYTES);
    }
    const text = deltas.map((event) => String(event.data.text)).join("");
    expect(text.length).toBeGreaterThanOrEqual(reply.length);
    expect(text).toContain(" END");
    expect(events.events.some((event) => JSON.stringify(event.data).includes("output_error"))).toBe(
      false,
    );
    await events.close();
  } finally {
    await api.close();
  }
}, 120_000);
