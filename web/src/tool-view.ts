import { type ActivityOutcome, activityLine } from "./activity.js";
import { h, preview } from "./dom.js";
import type { AgentEvent } from "./types.js";

type ToolEnd = Extract<AgentEvent, { type: "tool_end" }>;

/** One hunk of Claude Code's `structuredPatch` (lines start with `-`, `+` or a space). */
interface PatchHunk {
  oldStart: number;
  newStart: number;
  lines: string[];
}

/** Lines of output shown before "Show all". */
const SHOWN_LINES = 30;

/**
 * A tool call as a compact row that reads like what it did: Bash with its command, Read and
 * Write with the file, Edit as a coloured diff (from the result's structured patch), Glob and
 * Grep with the count found. Expanding it shows the whole input and output in monospace; a
 * long output is cut at 30 lines with "Show all"; images the tool returned are shown.
 */
export function toolLine(name: string, input: Record<string, unknown>) {
  const tool = name.toLowerCase();
  const line = activityLine("tool", name, toolSummary(tool, input), "");
  const { element } = line;
  element.dataset.tool = tool;
  const body = element.querySelector(".activity-body");
  const inputView = h("pre", { class: "tool-input", "data-testid": "tool-input" });
  inputView.textContent = toolInputText(tool, input);
  body?.replaceWith(inputView);
  return {
    element,
    finish(event: ToolEnd): void {
      const outcome: ActivityOutcome = event.isError ? "error" : "ok";
      line.finish(outcome, resultSummary(tool, input, event), "");
      const patch = patchOf(event.response);
      if (patch && !event.isError) {
        // The diff says what the input did; the raw old and new strings would only repeat it.
        inputView.hidden = true;
        element.append(diffView(patch));
        element.open = true;
      }
      if (event.content.trim() !== "" && !(patch && !event.isError)) {
        element.append(outputView(event.content));
      }
      for (const image of imagesOf(event)) element.append(image);
      if (imagesOf(event).length > 0) element.open = true;
    },
  };
}

function field(input: Record<string, unknown>, ...names: string[]): string {
  for (const name of names) {
    const value = input[name];
    if (typeof value === "string" && value !== "") return value;
  }
  return "";
}

function toolSummary(tool: string, input: Record<string, unknown>): string {
  switch (tool) {
    case "bash":
      return field(input, "command");
    case "read":
    case "write":
    case "edit":
    case "multiedit":
      return field(input, "file_path", "path");
    case "glob":
    case "grep":
      return field(input, "pattern");
    default:
      return (
        field(input, "command", "file_path", "path", "pattern", "url", "query") ||
        JSON.stringify(input)
      );
  }
}

/** The input in full: a command as it is, anything else as JSON. */
function toolInputText(tool: string, input: Record<string, unknown>): string {
  if (tool === "bash" && typeof input.command === "string") return `$ ${input.command}`;
  return JSON.stringify(input, null, 2);
}

function resultSummary(tool: string, input: Record<string, unknown>, event: ToolEnd): string {
  const base = toolSummary(tool, input);
  if (event.isError) return `${base} \u2014 ${preview(event.content, 60)}`;
  const response = isRecord(event.response) ? event.response : {};
  if (tool === "glob") {
    const count =
      typeof response.numFiles === "number"
        ? response.numFiles
        : event.content.split("\n").filter((line) => line.trim() !== "").length;
    return `${base} \u2014 ${count} ${count === 1 ? "file" : "files"}`;
  }
  if (tool === "edit" || tool === "multiedit" || tool === "write") {
    const patch = patchOf(event.response) ?? [];
    const added = patch.flatMap((hunk) => hunk.lines).filter((l) => l.startsWith("+")).length;
    const removed = patch.flatMap((hunk) => hunk.lines).filter((l) => l.startsWith("-")).length;
    return patch.length > 0 ? `${base} (+${added} \u2212${removed})` : base;
  }
  return base;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function patchOf(response: unknown): PatchHunk[] | null {
  if (!isRecord(response) || !Array.isArray(response.structuredPatch)) return null;
  const hunks = response.structuredPatch.filter(
    (hunk): hunk is PatchHunk => isRecord(hunk) && Array.isArray(hunk.lines),
  );
  return hunks.length > 0 ? hunks : null;
}

/** The patch as lines coloured by what happened to them, with a header per hunk. */
function diffView(patch: PatchHunk[]): HTMLElement {
  const view = h("pre", { class: "tool-diff", "data-testid": "tool-diff" });
  for (const hunk of patch) {
    view.append(h("span", { class: "diff-hunk" }, `@@ -${hunk.oldStart} +${hunk.newStart} @@\n`));
    for (const line of hunk.lines) {
      const kind = line.startsWith("+") ? "add" : line.startsWith("-") ? "remove" : "keep";
      view.append(h("span", { class: `diff-line diff-${kind}`, "data-diff": kind }, `${line}\n`));
    }
  }
  return view;
}

/** The output; past `SHOWN_LINES` lines, the rest behind "Show all". */
function outputView(content: string): HTMLElement {
  const lines = content.split("\n");
  const view = h("pre", { class: "tool-output", "data-testid": "tool-output" });
  if (lines.length <= SHOWN_LINES) {
    view.textContent = content;
    return view;
  }
  view.textContent = lines.slice(0, SHOWN_LINES).join("\n");
  const more = h(
    "button",
    { type: "button", class: "small show-all", "data-testid": "tool-show-all" },
    `Show all ${lines.length} lines`,
  );
  more.addEventListener("click", () => {
    view.textContent = content;
    more.remove();
  });
  return h("div", { class: "tool-output-frame" }, view, more);
}

/** Images the tool returned, as `data:` URLs of an image type (never anything else). */
function imagesOf(event: ToolEnd): HTMLElement[] {
  if (!Array.isArray(event.blocks)) return [];
  const images: HTMLElement[] = [];
  for (const block of event.blocks) {
    if (block.type !== "image") continue;
    const type = block.source.media_type;
    if (!/^image\/(png|jpeg|gif|webp)$/.test(type)) continue;
    images.push(
      h("img", {
        class: "tool-image",
        "data-testid": "tool-image",
        alt: "an image the tool returned",
        src: `data:${type};base64,${block.source.data}`,
      }),
    );
  }
  return images;
}
