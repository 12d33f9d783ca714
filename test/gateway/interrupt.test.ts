/**
 * `POST /api/channels/:id/interrupt` (the page's Stop) against the fake Claude Code CLI in its
 * `interrupt` scenario, whose turns run until an interrupt control request: the turn ends as
 * stopped, the same process takes the next message, and with no turn running the route says so.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { openEvents, startTestGateway, type TestGateway } from "./helpers.js";

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ prefix: "interrupt", scenario: "interrupt" });
});

afterAll(async () => {
  await gateway?.cleanup();
});

const pids = async () =>
  (await gateway.api<{ runners: Array<{ pid: number; inflight: boolean }> }>("GET", "/api/runners"))
    .body.runners;

it("stops the running turn; the process lives on and takes the next message", async () => {
  const idle = await gateway.api<{ error: string }>("POST", "/api/channels/work/interrupt");
  expect(idle.status).toBe(404);

  const events = openEvents(`${gateway.url}/api/channels/work/events?token=${gateway.token}`);
  const saying = (text: string) => (event: { data: Record<string, unknown> }) =>
    event.data.type === "text_delta" && String(event.data.text).includes(text);
  const first = await gateway.api<{ id: string }>("POST", "/api/channels/work/messages", {
    text: "a long job",
  });
  // The fake waits for the interrupt once it has said that it works on the message.
  await events.waitFor(saying("a long job"), "the turn working");
  const running = await waitFor(async () => {
    const runners = await pids();
    return runners.find((runner) => runner.inflight);
  }, "the turn running");
  const stopped = await gateway.api<{ interrupted: boolean }>(
    "POST",
    "/api/channels/work/interrupt",
  );
  expect(stopped).toEqual({ status: 200, body: { interrupted: true } });
  const error = await waitFor(async () => {
    const messages = await gateway.messages("work");
    return messages.find(
      (message) => message.kind === "error" && message.replyTo === first.body.id,
    );
  }, "the stopped turn's error");
  expect(error.text).toMatch(/^Stopped: you interrupted this turn/);
  expect((await gateway.messages("work")).find((m) => m.id === first.body.id)?.state).toBe(
    "failed",
  );
  expect(
    (await gateway.api<{ error: string }>("POST", "/api/channels/work/interrupt")).status,
  ).toBe(409);

  await gateway.api("POST", "/api/channels/work/messages", { text: "the next job" });
  await events.waitFor(saying("the next job"), "the next turn working");
  const next = await waitFor(async () => (await pids()).find((runner) => runner.inflight), "next");
  expect(next.pid).toBe(running.pid);
  await gateway.api("POST", "/api/channels/work/interrupt");
  await events.close();
});
