import { clock, h } from "./dom.js";
import type { ChannelSummary, WorktreeStatus } from "./types.js";

/**
 * The channels on the left. Channels opened on the page but not yet written
 * to exist only here until the gateway stores their first message.
 */
export class ChannelList {
  private known: ChannelSummary[] = [];
  private readonly local = new Set<string>();
  private selected: string | null = null;

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
    // Channels opened here but not yet written to are not stored, so they have only an id.
    const rows: Array<Pick<ChannelSummary, "id"> & Partial<ChannelSummary>> = [
      ...[...this.local].filter((id) => !ids.has(id)).map((id) => ({ id })),
      ...this.known,
    ];
    if (rows.length === 0) {
      this.list.replaceChildren(h("li", { class: "empty" }, "No channels yet."));
      return;
    }
    this.list.replaceChildren(
      ...rows.map((channel) => {
        const current = channel.id === this.selected;
        const button = h(
          "button",
          {
            type: "button",
            class: "channel",
            "data-testid": "channel",
            "data-channel": channel.id,
            "aria-current": current ? "page" : false,
          },
          h("span", { class: "channel-name" }, channel.id),
          ...(channel.worktree ? [worktreeLine(channel.worktree)] : []),
          channel.inflight
            ? h("span", { class: "channel-working", "data-testid": "channel-working" }, "working")
            : h("span", { class: "channel-time" }, clock(channel.lastActivityAt)),
        );
        button.addEventListener("click", () => this.select(channel.id));
        return h("li", {}, button);
      }),
    );
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
