/**
 * An `OutgoingChat` as the arguments of `chat.postMessage` / `chat.update`: markdown as mrkdwn,
 * plain text escaped and not formatted, and buttons as Block Kit (a section with the text and
 * an actions block, one button per kit button, its `value` the kit's data). An edit with an
 * empty button list keeps the section alone, so the buttons go.
 */
import type { OutgoingChat } from "../kit/chat-platform.js";
import { escapeMrkdwn, markdownToMrkdwn } from "./slack-mrkdwn.js";

/** A section's text may hold 3,000 characters: the kit splits answers to fit. */
export const SLACK_MESSAGE_LIMIT = 3000;

export interface SlackMessageArguments {
  text: string;
  mrkdwn: boolean;
  blocks?: unknown[];
}

export function slackMessage(message: OutgoingChat): SlackMessageArguments {
  const markdown = message.format === "markdown";
  const text = markdown ? markdownToMrkdwn(message.text) : escapeMrkdwn(message.text);
  if (message.buttons === undefined) return { text, mrkdwn: markdown };
  const section = {
    type: "section",
    text: markdown ? { type: "mrkdwn", text } : { type: "plain_text", text: message.text },
  };
  const buttons = message.buttons.flat();
  const blocks: unknown[] = [section];
  if (buttons.length > 0) {
    blocks.push({
      type: "actions",
      elements: buttons.map((button, index) => ({
        type: "button",
        action_id: `rudder-${index}`,
        text: { type: "plain_text", text: button.label },
        value: button.data,
      })),
    });
  }
  return { text, mrkdwn: markdown, blocks };
}
