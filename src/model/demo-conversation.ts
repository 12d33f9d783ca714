import type { ContentBlock, Message } from "./types.js";

/**
 * Reads the demo model's progress out of a conversation, so the demo keeps no
 * state of its own and works the same in `run`, `chat` and a resumed session.
 */

export const DEMO_TOOL_ID_PREFIX = "toolu_demo_";

export interface DemoToolCall {
  name: string;
  input: Record<string, unknown>;
  /** The tool result's text, once it has arrived. */
  result?: string;
  isError?: boolean;
}

export interface TaskNotice {
  taskId: string;
  status: string;
  summary: string;
}

export interface DemoProgress {
  /** Demo tool calls since the user's latest prompt, by tool name. */
  calls: Map<string, DemoToolCall>;
  /** Task notifications in the newest user message. */
  notices: TaskNotice[];
}

const NOTIFICATION = /<task_notification>[\s\S]*?<\/task_notification>/g;

function blocksOf(message: Message): ContentBlock[] {
  return typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : message.content;
}

function textOf(message: Message): string {
  return blocksOf(message)
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n");
}

/** True when a user message carries something the person typed, not only notices or results. */
function isPrompt(message: Message): boolean {
  if (message.role !== "user") return false;
  const remaining = textOf(message)
    .replace(NOTIFICATION, "")
    .split("\n")
    .filter((line) => !/automated notice|not user input/i.test(line))
    .join("")
    .trim();
  return remaining !== "";
}

function unescapeXml(text: string): string {
  return text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

export function taskNotices(text: string): TaskNotice[] {
  return [...text.matchAll(NOTIFICATION)].map(([block]) => {
    const field = (name: string): string =>
      unescapeXml(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(block)?.[1] ?? "");
    return { taskId: field("task_id"), status: field("status"), summary: field("summary") };
  });
}

export function demoProgress(messages: readonly Message[]): DemoProgress {
  let start = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (isPrompt(messages[index]!)) {
      start = index + 1;
      break;
    }
  }
  const calls = new Map<string, DemoToolCall>();
  const byId = new Map<string, DemoToolCall>();
  for (const message of messages.slice(start)) {
    for (const block of blocksOf(message)) {
      if (block.type === "tool_use" && block.id.startsWith(DEMO_TOOL_ID_PREFIX)) {
        const call: DemoToolCall = { name: block.name, input: block.input };
        calls.set(block.name, call);
        byId.set(block.id, call);
      } else if (block.type === "tool_result") {
        const call = byId.get(block.tool_use_id);
        if (call === undefined) continue;
        call.result =
          typeof block.content === "string" ? block.content : JSON.stringify(block.content);
        call.isError = block.is_error === true;
      }
    }
  }
  const lastUser = messages.findLast((message) => message.role === "user");
  const notices = lastUser === undefined ? [] : taskNotices(textOf(lastUser));
  return { calls, notices };
}

/** The file a demo should read from a glob listing: a top-level README first. */
export function pickFileToRead(listing: string): string | undefined {
  const paths = listing
    .split("\n")
    .map((line) => line.trim())
    .filter(
      (line) => line !== "" && !/^[([]/.test(line) && !/omitted/i.test(line) && !line.endsWith("/"),
    );
  const topLevel = paths.filter((path) => !path.includes("/"));
  return (
    topLevel.find((path) => /^readme(\.|$)/i.test(path)) ??
    topLevel.find((path) => /\.(md|txt|json|toml)$/i.test(path)) ??
    topLevel[0] ??
    paths[0]
  );
}
