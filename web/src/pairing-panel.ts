import type { ApiClient } from "./api.js";
import { h } from "./dom.js";

interface Pairing {
  source: string;
  code: string;
  userId: string;
  name: string;
  expiresAt: string;
  approvedAt: string | null;
}

/**
 * The pairing codes chat sources gave strangers (a Telegram bot's, say), each with an Approve
 * button that lets its person in (`POST /api/pairings/:source/:code`). Its own section of the
 * side panel, shown only while a code waits.
 */
export class PairingPanel {
  private readonly section: HTMLElement;
  private readonly list: HTMLUListElement;
  private readonly errorLine: HTMLElement;

  constructor(
    private readonly api: ApiClient,
    parent: HTMLElement,
  ) {
    this.list = h("ul", { class: "pairing-list", "data-testid": "pairing-list" });
    this.errorLine = h("p", { class: "panel-error", role: "alert" });
    this.section = h(
      "section",
      { "aria-labelledby": "pairing-heading", "data-testid": "pairings", hidden: "" },
      h("h2", { id: "pairing-heading" }, "Pairing requests"),
      this.list,
      this.errorLine,
    );
    parent.append(this.section);
  }

  async refresh(): Promise<void> {
    const result = await this.api.get<{ pairings: Pairing[] }>("/api/pairings");
    if (!result.ok) return;
    const waiting = result.value.pairings.filter((pairing) => pairing.approvedAt === null);
    this.section.hidden = waiting.length === 0;
    this.list.replaceChildren(...waiting.map((pairing) => this.row(pairing)));
  }

  private row(pairing: Pairing): HTMLElement {
    const approve = h(
      "button",
      {
        type: "button",
        class: "small",
        "aria-label": `Let in ${pairing.name} (${pairing.source} user ${pairing.userId}, code ${pairing.code})`,
      },
      "Approve",
    );
    approve.addEventListener("click", async () => {
      approve.disabled = true;
      const path = `/api/pairings/${encodeURIComponent(pairing.source)}/${encodeURIComponent(pairing.code)}`;
      const result = await this.api.post(path, {});
      this.errorLine.textContent = result.ok ? "" : `Could not approve: ${result.error}`;
      await this.refresh();
    });
    return h(
      "li",
      {},
      h(
        "span",
        {},
        `${pairing.source}: ${pairing.name} (user ${pairing.userId}), code ${pairing.code}`,
      ),
      approve,
    );
  }
}
