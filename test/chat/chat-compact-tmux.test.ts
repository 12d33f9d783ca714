import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeMessagesApi, lastUserText } from "../helpers/fake-messages-api.js";
import {
  atIdlePrompt,
  type ChatUnderTmux,
  screenLines,
  startChatUnderTmux,
  type TmuxDriver,
} from "./tmux-driver.js";

/**
 * `/compact` and `/clear` typed into `rudder chat` in a real terminal (tmux), against the fake
 * Messages API. The steps run in order on one chat. Waits are generous: the machine is shared.
 */
describe("rudder chat /compact and /clear in a terminal", () => {
  let chat: ChatUnderTmux;
  let api: FakeMessagesApi;
  let tmux: TmuxDriver;
  const WAIT_MS = 30_000;

  beforeAll(async () => {
    chat = await startChatUnderTmux("compact", []);
    ({ api, tmux } = chat);
    await tmux.waitFor("the prompt", (screen) => atIdlePrompt(screen), WAIT_MS);
  }, 60_000);

  afterAll(async () => {
    await chat?.close();
  });

  const idleWith = (text: string) =>
    tmux.waitFor(
      `${JSON.stringify(text)} and the prompt`,
      (screen) => {
        return screen.includes(text) && atIdlePrompt(screen);
      },
      WAIT_MS,
    );

  it("/compact [focus] summarizes the conversation and says by how much", async () => {
    api.push({ text: "Noted: FACT-42." });
    await tmux.type("remember FACT-42");
    await idleWith("Noted: FACT-42.");
    const before = api.mainRequests().length;

    api.push({ text: "<analysis>a</analysis>\n<summary>The user said FACT-42.</summary>" });
    await tmux.type("/compact keep the fact");
    const screen = await idleWith("context compacted:");
    const lines = screenLines(screen);
    const report = lines.find((line) => line.includes("context compacted:")) as string;
    expect(report).toMatch(/^ {2}context compacted: \d+(\.\d)?k? -> \d+(\.\d)?k? tokens$/);
    // One request, the summary's, with the focus in it; the command itself was no prompt.
    const requests = api.mainRequests().slice(before);
    expect(requests).toHaveLength(1);
    const asked = lastUserText(requests[0] as (typeof requests)[number]);
    expect(asked).toMatch(/write a summary of the whole conversation/i);
    expect(asked).toContain("keep the fact");
  }, 60_000);

  it("the conversation goes on from the summary", async () => {
    api.push({ text: "It was FACT-42." });
    await tmux.type("what was the fact?");
    await idleWith("It was FACT-42.");
    const sent = JSON.stringify(api.mainRequests().at(-1)?.body.messages);
    expect(sent).toContain("The user said FACT-42.");
    expect(sent).not.toContain("/compact");
  }, 60_000);

  it("/clear starts a new conversation that knows nothing of the old one", async () => {
    const before = api.mainRequests().length;
    await tmux.type("/clear");
    const screen = await idleWith("new conversation ");
    expect(screen).toMatch(
      /new conversation [0-9a-f-]{36} \(the previous one: rudder chat --resume [0-9a-f-]{36}\)/,
    );
    expect(api.mainRequests()).toHaveLength(before);

    api.push({ text: "Hello, fresh." });
    await tmux.type("hello again");
    await idleWith("Hello, fresh.");
    const messages = api.mainRequests().at(-1)?.body.messages as unknown[];
    expect(messages).toHaveLength(1);
    expect(JSON.stringify(messages)).not.toContain("FACT-42");
    expect(await tmux.exitStatus()).toBeUndefined();
  }, 60_000);

  it("/quit leaves with status 0", async () => {
    await tmux.type("/quit");
    expect(await tmux.waitForExit(WAIT_MS)).toBe(0);
  }, 60_000);
});
