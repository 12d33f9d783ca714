/**
 * The gateway never dies from what an agent prints: a child taken over by a prompt writes
 * binary bytes, JSON that is not an object, unknown and malformed lines, a prototype-polluting
 * key, a 200,000-deep tool input (too deep for JSON.stringify), odd permission and control
 * requests, a flood of 20,000 lines and a result of the wrong shapes (the fake CLI's
 * FAKE_CLAUDE_HOSTILE turn). The gateway keeps serving another channel meanwhile, its page's
 * event stream included, the hostile channel's message settles with its reply or an error line,
 * and the channel answers its next message.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { type ApiMessage, openEvents, startTestGateway, type TestGateway } from "./helpers.js";

const MARKER = "HOSTILE-AGENT-OUTPUT";
let gateway: TestGateway;
const logged: string[] = [];

beforeAll(async () => {
  gateway = await startTestGateway({
    prefix: "hostile",
    engine: {
      claudeBin: (await import("../helpers/fixtures.js")).FAKE_CLAUDE,
      env: { FAKE_CLAUDE_HOSTILE: MARKER },
    },
    logger: (line: string) => logged.push(line),
  });
});
afterAll(() => gateway?.cleanup());

function settled(messages: ApiMessage[], id: string): boolean {
  const state = messages.find((message) => message.id === id)?.state;
  return state === "answered" || state === "failed";
}

it("keeps serving every channel whatever an agent prints, and says what it dropped", async () => {
  const events = openEvents(`${gateway.url}/api/channels/hostile/events`, {
    authorization: `Bearer ${gateway.token}`,
  });
  const hostile = await gateway.api<{ id: string }>("POST", "/api/channels/hostile/messages", {
    text: `${MARKER} please`,
  });
  await gateway.api<{ id: string }>("POST", "/api/channels/calm/messages", {
    text: "an ordinary question",
  });
  expect(hostile.status).toBe(202);
  await waitFor(async () => {
    const messages = await gateway.messages("calm");
    return messages.some(
      (message) => message.kind === "reply" && message.text.includes("ordinary"),
    );
  }, "the calm channel answered");
  const messages = await waitFor(async () => {
    const all = await gateway.messages("hostile");
    return settled(all, hostile.body.id) ? all : undefined;
  }, "the hostile message settled");
  expect(messages.filter((message) => message.replyTo === hostile.body.id).length).toBeGreaterThan(
    0,
  );
  // Nothing the agent sent reached Object.prototype.
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  // The same channel answers its next message; the API still answers.
  const next = await gateway.api<{ id: string }>("POST", "/api/channels/hostile/messages", {
    text: "and now?",
  });
  await waitFor(async () => {
    const all = await gateway.messages("hostile");
    return all.some((message) => message.kind === "reply" && message.text.includes("and now?"));
  }, "the hostile channel's next message answered");
  expect(next.status).toBe(202);
  expect((await gateway.api("GET", "/api/health")).status).toBe(200);
  await events.close();
  // Each line it could not read is one clear log line naming the channel, a turn's first five.
  const unreadable = logged.filter((line) => line.includes("agent of channel hostile printed"));
  expect(unreadable).toHaveLength(5);
  expect(unreadable[2]).toContain("nested deeper than 256 levels");
  expect(unreadable[3]).toContain("line is JSON but not an object");
  // What the agent printed is quoted, its control characters escaped.
  const codes = [...unreadable.join("")].map((character) => character.codePointAt(0) ?? 0);
  expect(codes.filter((code) => code < 0x20 || code === 0x7f)).toEqual([]);
  expect(unreadable.at(-1)).toContain("further ones of this turn are not logged");
  expect(logged.some((line) => /\bat .*\.(ts|js):\d+/.test(line))).toBe(false);
});
