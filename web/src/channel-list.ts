import { channelLabel } from "./channel-settings.js";
import { clock, h } from "./dom.js";
import type { ChannelSummary, WorktreeStatus } from "./types.js";

/**
 * The channels on the left, by their names (see `channelLabel`). Channels opened on the page
 * but not yet written to exist only here until the gateway stores their first message.
 * Archived channels are left out but for the open one, behind "Archived (n)".
 */
export class ChannelList {
  private known: ChannelSummary[] = [];
  private readonly local = new Set<string>();
  private selected: string | null = null;
  private showArchived = false;

  constructor(
    private readonly list: HTMLElement,
    private readonly onSelect: (channelId: string) => void,
  ) {}

  get ids(): string[] {
    return this.known.map((channel) => channel.id);
  }

  show(channels: ChannelSummary[]): void {
    this.known = [...channels].sort((a, b) => activity(b) - activity(a));
    this.render();
  }

  /** Opens a channel by name, listing it even before it has any message. */
  open(channelId: string): void {
    if (!this.known.some((channel) => channel.id === channelId)) this.local.add(channelId);
    this.select(channelId);
  }

  select(channelId: string): void {
    // A channel opened here but never written to leaves the list once another is chosen.
    for (const id of this.local) if (id !== channelId) this.local.delete(id);
    this.selected = channelId;
    this.render();
    this.onSelect(channelId);
  }

  private render(): void {
    const ids = new Set(this.known.map((channel) => channel.id));
    const archived = this.known.filter((channel) => channel.archivedAt);
    // Channels opened here but not yet written to are not stored, so they have only an id.
    const rows: Array<Pick<ChannelSummary, "id"> & Partial<ChannelSummary>> = [
      ...[...this.local].filter((id) => !ids.has(id)).map((id) => ({ id })),
      ...this.known.filter(
        (channel) => !channel.archivedAt || this.showArchived || channel.id === this.selected,
      ),
    ];
    const items = rows.map((channel) => h("li", {}, this.row(channel)));
    if (items.length === 0) items.push(h("li", { class: "empty" }, "No channels yet."));
    if (archived.length > 0) items.push(h("li", {}, this.archivedToggle(archived.length)));
    this.list.replaceChildren(...items);
  }

  private row(channel: Pick<ChannelSummary, "id"> & Partial<ChannelSummary>): HTMLElement {
    const current = channel.id === this.selected;
    const label = channelLabel(channel);
    const button = h(
      "button",
      {
        type: "button",
        class: "channel",
        "data-testid": "channel",
        "data-channel": channel.id,
        "data-archived": channel.archivedAt ? "true" : false,
        "aria-current": current ? "page" : false,
        title: label === channel.id ? channel.id : `${label} (${channel.id})`,
      },
      h("span", { class: "channel-name" }, label),
      ...(channel.worktree ? [worktreeLine(channel.worktree)] : []),
      channel.inflight
        ? h("span", { class: "channel-working", "data-testid": "channel-working" }, "working")
        : h("span", { class: "channel-time" }, clock(channel.lastActivityAt)),
    );
    button.addEventListener("click", () => this.select(channel.id));
    return button;
  }

  private archivedToggle(count: number): HTMLElement {
    const toggle = h(
      "button",
      {
        type: "button",
        class: "small archived-toggle",
        "data-testid": "channels-archived",
        "aria-expanded": String(this.showArchived),
      },
      `${this.showArchived ? "Hide archived" : "Archived"} (${count})`,
    );
    toggle.addEventListener("click", () => {
      this.showArchived = !this.showArchived;
      this.render();
    });
    return toggle;
  }
}

/** `rudder/web-one-1a2b3c4d · dirty (2) · 1 ahead`: the channel's worktree, its folder as a tooltip. */
function worktreeLine(worktree: WorktreeStatus): HTMLElement {
  const parts = [
    worktree.branch,
    worktree.state === "dirty" ? `dirty (${worktree.changes})` : "clean",
  ];
  if (worktree.ahead) parts.push(`${worktree.ahead} ahead`);
  if (worktree.behind) parts.push(`${worktree.behind} behind`);
  return h(
    "span",
    { class: "channel-worktree", "data-testid": "channel-worktree", title: worktree.path },
    parts.join(" \u00b7 "),
  );
}

function activity(channel: ChannelSummary): number {
  const time = new Date(channel.lastActivityAt).getTime();
  return Number.isNaN(time) ? 0 : time;
}
