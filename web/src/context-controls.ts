import type { ApiClient } from "./api.js";
import type { ContextUsage } from "./types.js";

/** "182k", "950", "1.2M": a token count the way people read it. */
function tokens(count: number): string {
  if (count >= 1_000_000) return `${Number((count / 1_000_000).toFixed(1))}M`;
  if (count >= 1000) return `${Math.round(count / 1000)}k`;
  return String(count);
}

/**
 * The open channel's context: how full it is (tokens used of the model's window, from the
 * turn results), and its two actions, Compact (with an optional focus) and New
 * conversation. Each action waits for the gateway's answer; its outcome or error shows
 * in `status`, and the conversation's divider comes through the event stream.
 */
export class ContextControls {
  private channelId: string | null = null;
  private running = false;

  constructor(
    private readonly api: ApiClient,
    private readonly meter: HTMLElement,
    private readonly form: HTMLFormElement,
    private readonly focus: HTMLInputElement,
    reset: HTMLButtonElement,
    private readonly status: (text: string) => void,
  ) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.run("compact");
    });
    reset.addEventListener("click", () => void this.run("reset"));
  }

  /** Another channel is open (or its listing was refreshed). */
  show(channelId: string, usage: ContextUsage | null | undefined): void {
    this.channelId = channelId;
    this.showUsage(usage ?? null);
  }

  showUsage(usage: ContextUsage | null): void {
    if (usage === null) {
      this.meter.textContent = "";
      this.meter.title = "";
      delete this.meter.dataset.level;
      return;
    }
    const { window } = usage;
    const share = window ? Math.min(100, Math.round((usage.tokens / window) * 100)) : null;
    this.meter.textContent =
      window === null
        ? `context ${tokens(usage.tokens)} tokens`
        : `context ${tokens(usage.tokens)} / ${tokens(window)} (${share}%)`;
    this.meter.title = `${usage.tokens.toLocaleString()} tokens in the agent's context${
      window === null ? "" : ` of a ${window.toLocaleString()}-token window`
    }`;
    this.meter.dataset.level =
      share === null ? "" : share >= 80 ? "high" : share >= 50 ? "mid" : "low";
  }

  private async run(action: "compact" | "reset"): Promise<void> {
    const id = this.channelId;
    if (id === null || this.running) return;
    this.running = true;
    this.form.dataset.running = action;
    for (const button of this.form.querySelectorAll("button")) button.disabled = true;
    this.status(
      action === "compact"
        ? "Compacting the conversation\u2026"
        : "Starting a new conversation\u2026",
    );
    const path = `/api/channels/${encodeURIComponent(id)}/${action}`;
    const focus = this.focus.value.trim();
    const result = await this.api.post<{ preTokens?: number | null; postTokens?: number | null }>(
      path,
      action === "compact" && focus !== "" ? { instructions: focus } : {},
    );
    this.running = false;
    delete this.form.dataset.running;
    for (const button of this.form.querySelectorAll("button")) button.disabled = false;
    if (id !== this.channelId) return;
    if (!result.ok) {
      this.status(`${action === "compact" ? "Not compacted" : "Not reset"}: ${result.error}`);
      return;
    }
    if (action === "compact") this.focus.value = "";
    this.status("");
  }
}
