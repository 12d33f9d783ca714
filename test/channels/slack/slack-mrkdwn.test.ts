/** Markdown to Slack's mrkdwn: each construct, the escapes, and code left alone. */
import { describe, expect, it } from "vitest";
import { markdownToMrkdwn } from "../../../src/channels/slack/slack-mrkdwn.js";

describe("markdownToMrkdwn", () => {
  it.each([
    ["**bold** and __bold__", "*bold* and *bold*"],
    ["*italic* and _italic_", "_italic_ and _italic_"],
    ["***both***", "*_both_*"],
    ["~~gone~~", "~gone~"],
    ["[docs](https://example.com/a?b=1)", "<https://example.com/a?b=1|docs>"],
    ["## Heading **x**", "*Heading x*"],
    ["- one\n* two\n  + three", "• one\n• two\n  • three"],
    ["> quoted *word*", "> quoted _word_"],
    ["a < b & c > d", "a &lt; b &amp; c &gt; d"],
    ["`**not bold** <x>`", "`**not bold** &lt;x&gt;`"],
    ["2 * 3 * 4", "2 * 3 * 4"],
    ["snake_case_name", "snake_case_name"],
  ])("%j", (markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });

  it("keeps fenced code as it is, escaped, without its language", () => {
    expect(markdownToMrkdwn("see:\n```ts\nconst a = **b** < c;\n```\ndone **now**")).toBe(
      "see:\n```\nconst a = **b** &lt; c;\n```\ndone *now*",
    );
  });

  it("closes a fence the text left open", () => {
    expect(markdownToMrkdwn("```\nopen")).toBe("```\nopen\n```");
  });
});
