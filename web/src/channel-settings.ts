import type { ApiClient } from "./api.js";
import { h } from "./dom.js";
import type { ChannelSummary } from "./types.js";

/** The name people know a channel by: the one given here, its chat's own title, else its id. */
export function channelLabel(
  channel: Pick<ChannelSummary, "id"> & Partial<ChannelSummary>,
): string {
  return channel.title || channel.chatTitle || channel.id;
}

/**
 * The open channel's Rename, Archive (Restore, once archived) and Delete buttons in the
 * conversation's head, through `PATCH /api/channels/:id` and `DELETE /api/channels/:id`. Rename
 * opens a small field in place: Enter saves (an empty name goes back to the chat's title or the
 * id), Escape leaves it. Delete asks first; when the gateway refuses (a turn running, uncommitted
 * work in its worktree) it shows why and asks again before forcing it.
 */
export class ChannelSettingsControls {
  readonly element: HTMLElement;
  private channel: ChannelSummary | null = null;
  private readonly rename: HTMLButtonElement;
  private readonly archive: HTMLButtonElement;
  private readonly remove: HTMLButtonElement;
  private readonly form: HTMLFormElement;
  private readonly field: HTMLInputElement;
  private readonly error: HTMLElement;

  constructor(
    private readonly api: ApiClient,
    /** After a change: list the channels again. */
    private readonly changed: () => void,
    /** After the channel was deleted: open another. */
    private readonly removed: (channelId: string) => void,
  ) {
    this.rename = h(
      "button",
      { type: "button", class: "small", "data-testid": "channel-rename" },
      "Rename",
    );
    this.archive = h("button", {
      type: "button",
      class: "small",
      "data-testid": "channel-archive",
    });
    this.remove = h(
      "button",
      {
        type: "button",
        class: "small",
        "data-testid": "channel-delete",
        title:
          "Delete this channel: its history, schedules and worktree go; its spend stays counted",
      },
      "Delete",
    );
    this.field = h("input", {
      type: "text",
      "data-testid": "channel-rename-input",
      "aria-label": "Channel name",
      maxlength: "120",
      autocomplete: "off",
    });
    this.form = h("form", { class: "channel-rename-form", hidden: true }, this.field);
    this.error = h("span", {
      class: "panel-error",
      "data-testid": "channel-settings-error",
      role: "alert",
    });
    this.element = h(
      "span",
      { class: "channel-settings", hidden: true },
      this.rename,
      this.form,
      this.archive,
      this.remove,
      this.error,
    );
    this.rename.addEventListener("click", () => this.editName());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.patch({ title: this.field.value.trim() || null });
    });
    this.field.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.closeName();
    });
    this.archive.addEventListener("click", () => {
      void this.patch({ archived: !this.channel?.archivedAt });
    });
    this.remove.addEventListener("click", () => void this.delete());
  }

  /** Deletes the open channel once confirmed, and once more when the gateway asks for force. */
  private async delete(): Promise<void> {
    const channel = this.channel;
    if (channel === null) return;
    this.error.textContent = "";
    const asked =
      `Delete the channel ${channelLabel(channel)}? Its history, grants and schedules are ` +
      "deleted and its worktree removed (a branch with commits is kept). This cannot be undone.";
    if (!window.confirm(asked)) return;
    const path = `/api/channels/${encodeURIComponent(channel.id)}`;
    let result = await this.api.delete<{ text: string }>(path);
    if (!result.ok && result.status === 409 && !/another worker|driven by/.test(result.error)) {
      if (!window.confirm(`${result.error}\n\nDelete it anyway?`)) return;
      result = await this.api.delete<{ text: string }>(`${path}?force=1`);
    }
    if (!result.ok) {
      this.error.textContent = `Not deleted: ${result.error}`;
      return;
    }
    this.removed(channel.id);
  }

  /** The open channel as last listed; undefined while it is not stored yet (no message). */
  show(channel: ChannelSummary | undefined): void {
    this.channel = channel ?? null;
    this.element.hidden = channel === undefined;
    if (channel === undefined) return;
    this.archive.textContent = channel.archivedAt ? "Restore" : "Archive";
    this.archive.title = channel.archivedAt
      ? "Show this channel in the list again"
      : "Hide this channel from the list; its history is kept";
  }

  private editName(): void {
    if (this.channel === null) return;
    this.field.value = this.channel.title ?? "";
    this.field.placeholder = this.channel.chatTitle ?? this.channel.id;
    this.form.hidden = false;
    this.rename.hidden = true;
    this.field.focus();
  }

  private closeName(): void {
    this.form.hidden = true;
    this.rename.hidden = false;
  }

  private async patch(change: { title?: string | null; archived?: boolean }): Promise<void> {
    const channel = this.channel;
    if (channel === null) return;
    this.error.textContent = "";
    const result = await this.api.patch<{ channel: ChannelSummary }>(
      `/api/channels/${encodeURIComponent(channel.id)}`,
      change,
    );
    if (!result.ok) {
      this.error.textContent = `Not changed: ${result.error}`;
      return;
    }
    this.closeName();
    this.show({ ...channel, ...result.value.channel });
    this.changed();
  }
}
