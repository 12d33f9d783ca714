/**
 * The files an agent sent with a reply (its `send_file` tool; `files` on the stored reply),
 * shown under the reply, and the files that came with a user message (`attachments`), under
 * it: an image inline, anything else as a link that downloads it. The bytes
 * come from `GET /api/channels/:id/files/<path>` with the bearer token (fetched, then shown
 * from an object URL), so the token never goes into a URL. A file gone from the workspace
 * says so in place.
 */
import "./sent-files.css";
import { byteSize } from "../../src/tools/byte-size.js";
import type { ApiClient } from "./api.js";
import { h } from "./dom.js";
import type { StoredMessage } from "./types.js";

type SentFile = NonNullable<StoredMessage["files"]>[number];

const IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

function fileUrl(channelId: string, file: SentFile): string {
  const path = file.path.split("/").map(encodeURIComponent).join("/");
  return `/api/channels/${encodeURIComponent(channelId)}/files/${path}`;
}

/** A user message's attachment as a file to show (its name the path's last part). */
function attachedFile(attachment: NonNullable<StoredMessage["attachments"]>[number]): SentFile {
  const name = attachment.path.slice(attachment.path.lastIndexOf("/") + 1);
  return {
    path: attachment.path,
    name,
    mediaType: attachment.mediaType,
    size: attachment.size ?? 0,
  };
}

/** The files of `message`, or null when it has none. */
export function sentFilesView(api: ApiClient, message: StoredMessage): HTMLElement | null {
  const files = message.files ?? (message.attachments ?? []).map(attachedFile);
  if (files.length === 0) return null;
  return h(
    "ul",
    { class: "sent-files", "data-testid": "sent-files" },
    ...files.map((file) => fileItem(api, message.channelId, file)),
  );
}

function fileItem(api: ApiClient, channelId: string, file: SentFile): HTMLElement {
  const url = fileUrl(channelId, file);
  const problem = h("span", { class: "sent-file-problem", hidden: true });
  const fail = (error: string) => {
    problem.textContent = `Not available: ${error}`;
    problem.hidden = false;
  };
  const caption = file.caption ? h("span", { class: "sent-file-caption" }, file.caption) : null;
  if (IMAGES.has(file.mediaType)) {
    const image = h("img", { alt: file.name, "data-testid": "sent-image", loading: "lazy" });
    void api.blob(url).then((result) => {
      if (result.ok) image.src = URL.createObjectURL(result.value);
      else fail(result.error);
    });
    return h(
      "li",
      { class: "sent-file sent-image", "data-testid": "sent-file", title: file.path },
      image,
      caption,
      problem,
    );
  }
  const link = h(
    "a",
    { href: "#", download: file.name, "data-testid": "sent-file-link" },
    `${file.name} (${byteSize(file.size)})`,
  );
  link.addEventListener("click", (event) => {
    event.preventDefault();
    void api.blob(url).then((result) => {
      if (!result.ok) {
        fail(result.error);
        return;
      }
      const save = h("a", { href: URL.createObjectURL(result.value), download: file.name });
      save.click();
      setTimeout(() => URL.revokeObjectURL(save.href), 60_000);
    });
  });
  return h(
    "li",
    { class: "sent-file", "data-testid": "sent-file", title: file.path },
    link,
    caption,
    problem,
  );
}
