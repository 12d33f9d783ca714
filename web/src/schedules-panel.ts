import type { ApiClient } from "./api.js";
import { dateTime, h } from "./dom.js";
import type { Schedule } from "./types.js";

/** Cron schedules that post a prompt into a channel: listed, added, removed. */
export class SchedulesPanel {
  constructor(
    private readonly api: ApiClient,
    private readonly list: HTMLElement,
    private readonly form: HTMLFormElement,
    private readonly errorLine: HTMLElement,
  ) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.add();
    });
  }

  async refresh(): Promise<void> {
    const result = await this.api.get<{ schedules: Schedule[] }>("/api/schedules");
    if (!result.ok) {
      this.errorLine.textContent = `Could not list schedules: ${result.error}`;
      return;
    }
    this.errorLine.textContent = "";
    this.render(result.value.schedules);
  }

  private async add(): Promise<void> {
    const data = new FormData(this.form);
    const channel = String(data.get("channel") ?? "").trim();
    // The gateway reads `channel`; `channelId` matches the listed shape.
    const body = {
      cron: String(data.get("cron") ?? "").trim(),
      channel,
      channelId: channel,
      prompt: String(data.get("prompt") ?? "").trim(),
    };
    const result = await this.api.post("/api/schedules", body);
    if (!result.ok) {
      this.errorLine.textContent = `Could not add the schedule: ${result.error}`;
      return;
    }
    this.errorLine.textContent = "";
    for (const name of ["cron", "prompt"]) {
      const field = this.form.elements.namedItem(name);
      if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) {
        field.value = "";
      }
    }
    await this.refresh();
  }

  private render(schedules: Schedule[]): void {
    if (schedules.length === 0) {
      this.list.replaceChildren(h("li", { class: "empty" }, "No schedules."));
      return;
    }
    this.list.replaceChildren(...schedules.map((schedule) => this.row(schedule)));
  }

  private row(schedule: Schedule): HTMLElement {
    const remove = h(
      "button",
      {
        type: "button",
        class: "danger small",
        "data-testid": "schedule-remove",
        "aria-label": `Remove the schedule "${schedule.cron}" of channel ${schedule.channelId}`,
      },
      "Remove",
    );
    remove.addEventListener("click", async () => {
      remove.disabled = true;
      const result = await this.api.delete(`/api/schedules/${encodeURIComponent(schedule.id)}`);
      if (!result.ok) this.errorLine.textContent = `Could not remove: ${result.error}`;
      await this.refresh();
    });
    const resume = schedule.paused
      ? h(
          "button",
          {
            type: "button",
            class: "small",
            "data-testid": "schedule-resume",
            "aria-label": `Resume the paused schedule "${schedule.cron}" of channel ${schedule.channelId}`,
          },
          "Resume",
        )
      : null;
    resume?.addEventListener("click", async () => {
      resume.disabled = true;
      const path = `/api/schedules/${encodeURIComponent(schedule.id)}/resume`;
      const result = await this.api.post(path, {});
      if (!result.ok) this.errorLine.textContent = `Could not resume: ${result.error}`;
      await this.refresh();
    });
    const next = schedule.paused ? "paused" : `next ${dateTime(schedule.nextRunAt) || "?"}`;
    return h(
      "li",
      {
        class: "schedule",
        "data-testid": "schedule",
        "data-schedule-id": schedule.id,
        "data-paused": String(schedule.paused),
      },
      h(
        "div",
        { class: "schedule-text" },
        h("code", { class: "schedule-cron" }, schedule.cron),
        h("span", { class: "schedule-meta" }, ` ${schedule.channelId} \u00b7 ${next}`),
        h("span", { class: "schedule-prompt" }, schedule.prompt),
        schedule.lastError
          ? h(
              "span",
              { class: "schedule-error", role: "note" },
              `Last error: ${schedule.lastError}`,
            )
          : null,
      ),
      resume,
      remove,
    );
  }
}
