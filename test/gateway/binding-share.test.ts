/**
 * A binding's `maxLive`, its share of `--max-live`: at most that many of its channels keep a
 * live agent process; past it a message of another of its channels is answered by a one-shot
 * process, while channels of other bindings still get kept ones (the fake agent CLI).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayBindings } from "../../src/gateway/bindings/bindings.js";
import { loadGatewayConfig } from "../../src/gateway/bindings/load-gateway-config.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

let folder: string;
let gateway: TestGateway;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), "rudder-binding-share-"));
  const file = join(folder, "config.json");
  writeFileSync(
    file,
    JSON.stringify({ bindings: [{ name: "pair", match: ["pair-*"], maxLive: 1 }] }),
  );
  const loaded = await loadGatewayConfig(file);
  if (loaded instanceof Error) throw loaded;
  gateway = await startTestGateway({
    prefix: "binding-share",
    maxLive: 4,
    bindings: new GatewayBindings(loaded, { cwd: folder, engine: "claude" }),
  });
});

afterAll(async () => {
  await gateway?.cleanup();
  rmSync(folder, { recursive: true, force: true });
});

async function answered(channelId: string): Promise<void> {
  await waitFor(
    async () => (await gateway.messages(channelId)).some((message) => message.kind === "reply"),
    `${channelId} answered`,
  );
}

it("keeps at most the binding's share of live agents; past it a one-shot answers", async () => {
  for (const channelId of ["pair-1", "pair-2", "other-1", "other-2"]) {
    await gateway.api("POST", `/api/channels/${channelId}/messages`, { text: "hello" });
    await answered(channelId);
  }
  const { body } = await gateway.api<{ runners: Array<{ channelId: string }> }>(
    "GET",
    "/api/runners",
  );
  const kept = body.runners.map((runner) => runner.channelId).sort();
  // pair-2 was answered by a one-shot process (the binding's one live agent is pair-1's); the
  // channels no binding matches share the rest of --max-live.
  expect(kept).toEqual(["other-1", "other-2", "pair-1"]);
});
