import type { ApiClient } from "./api.js";
import { clock, h } from "./dom.js";
import type { SpendFigures, SpendReport } from "./types.js";

type Limit = SpendFigures["limits"][number];

/** `$0.0069`, `$4.20`, `$120`: small amounts keep their first digits. */
function money(usd: number): string {
  if (usd > 0 && usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd < 10 ? usd.toFixed(2) : usd.toFixed(0)}`;
}

function amount(value: number, unit: Limit["unit"]): string {
  return unit === "usd" ? money(value) : `${Math.round(value).toLocaleString("en-US")} tokens`;
}

/** `today $0.42 / $5.00`, with a bar of how much of the limit is used and when it resets. */
function limitLine(limit: Limit): HTMLElement {
  const used = limit.amount > 0 ? Math.min(1, limit.spent / limit.amount) : 1;
  const period = limit.period === "day" ? "today" : "this month";
  const who = limit.perChannel ? " per channel" : "";
  const text = `${period}${who}: ${amount(limit.spent, limit.unit)} / ${amount(limit.amount, limit.unit)}`;
  const resets = new Date(limit.resetsAt);
  const when = limit.period === "day" ? clock(limit.resetsAt) : resets.toISOString().slice(0, 10);
  return h(
    "li",
    {
      class: "spend-limit",
      "data-testid": "spend-limit",
      "data-state": used >= 1 ? "reached" : used >= 0.8 ? "near" : "ok",
      title: `resets ${resets.toLocaleString()} (${limit.timeZone})`,
    },
    h("span", {}, text),
    h("meter", { min: "0", max: "1", low: "0.8", high: "0.99", optimum: "0", value: String(used) }),
    h("span", { class: "spend-reset" }, `resets ${when}`),
  );
}

function block(name: string, figures: SpendFigures, testId: string): HTMLElement {
  const spent = `today ${money(figures.today.usd)} \u00b7 this month ${money(figures.thisMonth.usd)}`;
  const limits = figures.limits.filter((limit) => !limit.perChannel || testId === "spend-channel");
  return h(
    "li",
    { class: "spend-entry", "data-testid": testId, "data-name": name },
    h("span", { class: "spend-name" }, name),
    h("span", { class: "spend-total" }, spent),
    limits.length > 0
      ? h("ul", { class: "spend-limits" }, ...limits.map(limitLine))
      : h("span", { class: "spend-none" }, "no limit"),
  );
}

/**
 * Spend against the budgets (`GET /api/spend`): the gateway's, each binding's and each channel
 * a per-channel limit applies to, today and this month, each limit with a bar and its reset.
 * Its own section of the side panel.
 */
export class SpendPanel {
  private readonly list: HTMLUListElement;
  private readonly errorLine: HTMLElement;

  constructor(
    private readonly api: ApiClient,
    parent: HTMLElement,
  ) {
    this.list = h("ul", { class: "spend-list", "data-testid": "spend-list" });
    this.errorLine = h("p", { class: "panel-error", role: "alert" });
    parent.append(
      h(
        "section",
        { "aria-labelledby": "spend-heading", "data-testid": "spend" },
        h("h2", { id: "spend-heading" }, "Spend"),
        this.list,
        this.errorLine,
      ),
    );
  }

  async refresh(): Promise<void> {
    const result = await this.api.get<SpendReport>("/api/spend");
    if (!result.ok) {
      this.errorLine.textContent = `Could not read spend: ${result.error}`;
      return;
    }
    this.errorLine.textContent = "";
    const { gateway, bindings, channels } = result.value;
    this.list.replaceChildren(
      block("gateway", gateway, "spend-gateway"),
      ...bindings.map((binding) => block(binding.name, binding, "spend-binding")),
      ...channels.map((channel) =>
        block(`${channel.channelId} (${channel.binding})`, channel, "spend-channel"),
      ),
    );
  }
}
