import {
  DEMO_TOOL_ID_PREFIX,
  type DemoProgress,
  demoProgress,
  pickFileToRead,
} from "./demo-conversation.js";
import type { ContentBlock, Model, ModelOutcome, ModelRequest } from "./types.js";
import { emptyUsage } from "./types.js";

export const DEMO_LABEL = "[demo model]";
export const DEMO_BACKGROUND_COMMAND = "sleep 1 && ls -1 | wc -l";

interface DemoStep {
  text: string;
  toolUse?: { name: string; input: Record<string, unknown> };
}

function firstLine(text: string, limit = 120): string {
  const line = text.split("\n").find((candidate) => candidate.trim() !== "") ?? "";
  return line.length > limit ? `${line.slice(0, limit)}...` : line.trim();
}

/** The demo's tools under Claude Code's names, which hosts of Claude Code are shown. */
const CLAUDE_NAMES: Readonly<Record<string, string>> = {
  glob: "Glob",
  read_file: "Read",
  bash: "Bash",
};

type ToolNamer = (rudderName: string) => string;

function summary(progress: DemoProgress, name: ToolNamer): string {
  const lines = [`${DEMO_LABEL} Here is what just happened, with rudder's real tools:`];
  const glob = progress.calls.get(name("glob"));
  if (glob?.result !== undefined) {
    const listing = glob.result.split("\n");
    const omitted = listing.find((line) => /omitted/i.test(line));
    const paths = listing.filter((line) => line !== omitted && /^[^(\s]/.test(line));
    const found = `${paths.length} path${paths.length === 1 ? "" : "s"}`;
    lines.push(
      glob.isError
        ? `- glob failed: ${firstLine(glob.result)}`
        : `- glob found ${found} in your workspace${omitted ? ` (${omitted.replace(/^[.\s]+/, "")})` : ""}.`,
    );
  }
  const read = progress.calls.get(name("read_file"));
  if (read?.result !== undefined) {
    lines.push(
      read.isError
        ? `- read_file failed: ${firstLine(read.result)}`
        : `- read_file read ${String(read.input.path ?? read.input.file_path)}; it starts: "${firstLine(read.result)}"`,
    );
  }
  const bash = progress.calls.get(name("bash"));
  if (bash?.result !== undefined && bash.isError) {
    lines.push(`- bash was refused: ${firstLine(bash.result)}`);
  }
  for (const notice of progress.notices) {
    lines.push(
      `- background task ${notice.taskId} ${notice.status}; its output: ${firstLine(notice.summary)}`,
    );
  }
  lines.push(
    "That was the offline demo: a fixed script, not a real model. Set ANTHROPIC_API_KEY " +
      "(or ANTHROPIC_AUTH_TOKEN) and drop --model demo to work with Claude.",
  );
  return lines.join("\n");
}

/**
 * The next scripted move, from what the conversation shows has happened so far. The tools
 * are called under the names the request offers: rudder's, or Claude Code's (`Glob`, `Read`
 * with `file_path`, `Bash`).
 */
export function nextDemoStep(request: ModelRequest): DemoStep {
  const progress = demoProgress(request.messages);
  const available = new Set(request.tools.map((tool) => tool.name));
  const claude = !available.has("glob") && available.has("Glob");
  const name: ToolNamer = (rudderName) =>
    claude ? (CLAUDE_NAMES[rudderName] ?? rudderName) : rudderName;
  const { calls } = progress;
  if (progress.notices.length > 0) return { text: summary(progress, name) };
  if (!calls.has(name("glob")) && available.has(name("glob"))) {
    return {
      text: `${DEMO_LABEL} I am rudder's offline demo model: I follow a fixed script whatever you ask, using the real tools on your workspace. First, a look around with glob.`,
      toolUse: { name: name("glob"), input: { pattern: "**/*" } },
    };
  }
  const glob = calls.get(name("glob"));
  const file = glob?.result === undefined || glob.isError ? undefined : pickFileToRead(glob.result);
  if (!calls.has(name("read_file")) && available.has(name("read_file")) && file !== undefined) {
    return {
      text: `${DEMO_LABEL} Now reading ${file}.`,
      toolUse: {
        name: name("read_file"),
        input: { [claude ? "file_path" : "path"]: file, limit: 20 },
      },
    };
  }
  if (!calls.has(name("bash")) && available.has(name("bash"))) {
    return {
      text: `${DEMO_LABEL} Next, a command in the background; its result arrives later as a task notification.`,
      toolUse: {
        name: name("bash"),
        input: { command: DEMO_BACKGROUND_COMMAND, run_in_background: true },
      },
    };
  }
  const bash = calls.get(name("bash"));
  if (bash !== undefined && !bash.isError) {
    return {
      text: `${DEMO_LABEL} The background task is running; I will sum up when its notification arrives.`,
    };
  }
  return { text: summary(progress, name) };
}

function streamText(text: string, onTextDelta: ((text: string) => void) | undefined): void {
  if (onTextDelta === undefined) return;
  for (const piece of text.match(/\S+\s*|\s+/g) ?? []) onTextDelta(piece);
}

/**
 * An offline scripted model named `demo` that tours the real tools: glob, then
 * read_file of a file found (a README when there is one), then a background
 * bash, then a summary once the task's notification arrives. Every reply starts
 * with `[demo model]`. Stateless: each call derives its step from the messages.
 */
export function createDemoModel(): Model {
  let replies = 0;
  return {
    name: "demo",
    complete: async (request): Promise<ModelOutcome> => {
      if (request.signal.aborted) {
        return { ok: false, error: { subtype: "aborted", message: "Request aborted" } };
      }
      const step = nextDemoStep(request);
      streamText(step.text, request.onTextDelta);
      const content: ContentBlock[] = [{ type: "text", text: step.text }];
      replies++;
      if (step.toolUse !== undefined) {
        const id = `${DEMO_TOOL_ID_PREFIX}${step.toolUse.name}_${request.messages.length}_${replies}`;
        content.push({ type: "tool_use", id, ...step.toolUse });
      }
      return {
        ok: true,
        response: {
          id: `msg_demo_${replies}`,
          content,
          stopReason: step.toolUse === undefined ? "end_turn" : "tool_use",
          usage: emptyUsage(),
        },
      };
    },
  };
}
