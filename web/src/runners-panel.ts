import type { ApiClient } from "./api.js";
import { clock, h } from "./dom.js";
import type { Runner } from "./types.js";

/** `84 MiB`: a process tree's resident memory as `GET /api/runners` measures it. */
function memory(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "";
  const mebibytes = bytes / (1024 * 1024);
  return mebibytes >= 1024
    ? ` \u00b7 ${(mebibytes / 1024).toFixed(1)} GiB`
    : ` \u00b7 ${Math.round(mebibytes)} MiB`;
}

/** Live agent processes, one per channel, each with its memory and a stop button. */
export class RunnersPanel {
  constructor(
    private readonly api: ApiClient,
    private readonly list: HTMLElement,
    private readonly errorLine: HTMLElement,
  ) {}

  async refresh(): Promise<void> {
    const result = await this.api.get<{ runners: Runner[] }>("/api/runners");
    if (!result.ok) {
      this.errorLine.textContent = `Could not list agent processes: ${result.error}`;
      return;
    }
    this.errorLine.textContent = "";
    this.render(result.value.runners);
  }

  private render(runners: Runner[]): void {
    if (runners.length === 0) {
      this.list.replaceChildren(h("li", { class: "empty" }, "No live agent processes."));
      return;
    }
    this.list.replaceChildren(...runners.map((runner) => this.row(runner)));
  }

  private row(runner: Runner): HTMLElement {
    const working = runner.inflight;
    const stop = h(
      "button",
      {
        type: "button",
        class: "danger small",
        "data-testid": "runner-stop",
        "aria-label": `End the agent process of channel ${runner.channelId}`,
        title: "Ends the process (a running turn fails); the next message starts a new one",
      },
      "End process",
    );
    stop.addEventListener("click", async () => {
      stop.disabled = true;
      const result = await this.api.delete(`/api/runners/${encodeURIComponent(runner.channelId)}`);
      if (!result.ok) this.errorLine.textContent = `Could not end the process: ${result.error}`;
      await this.refresh();
    });
    const state = working ? "working" : `idle since ${clock(runner.idleSince) || "start"}`;
    return h(
      "li",
      {
        class: "runner",
        "data-testid": "runner",
        "data-channel": runner.channelId,
        "data-working": working,
      },
      h(
        "div",
        { class: "runner-text" },
        h("span", { class: "runner-channel" }, runner.channelId),
        h(
          "span",
          { class: "runner-meta", title: runner.sessionId ? `session ${runner.sessionId}` : "" },
          `pid ${runner.pid ?? "?"} \u00b7 ${runner.oneShot ? "one-shot, " : ""}${state}${memory(runner.rssBytes)}`,
        ),
      ),
      stop,
    );
  }
}
