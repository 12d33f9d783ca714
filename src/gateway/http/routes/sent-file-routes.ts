/**
 * `GET /api/channels/:id/files/<path>` (token needed): a file of the channel's workspace, for
 * the page to show the files the agent sent (`files` on its replies). Read-only; the path is
 * judged as the file tools judge one (inside the workspace, no link followed, one hard link,
 * within the attachment cap), so nothing outside the workspace is ever read. An image (by its
 * bytes: PNG, JPEG, GIF, WebP) is served inline; anything else as an attachment to download,
 * with `nosniff` and a sandboxing policy, so no file runs as a page of the gateway's origin.
 */
import { Hono } from "hono";
import type { SentFiles } from "../../media/sent-files.js";
import { SentFileError } from "../../media/sent-files.js";
import { ApiError, channelParam } from "./api-request.js";

const INLINE = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** `filename*` as RFC 6266 has it, so any name survives the header. */
function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^A-Za-z0-9._-]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export function sentFileRoutes(sentFiles: Pick<SentFiles, "load">): Hono {
  const routes = new Hono();
  routes.get("/channels/:id/files/:path{.+}", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const path = context.req.param("path");
    if (path.startsWith("/") || path.split("/").includes("..")) {
      throw new ApiError("the path must be relative to the workspace, without ..");
    }
    let loaded: Awaited<ReturnType<SentFiles["load"]>>;
    try {
      loaded = await sentFiles.load(channelId, path);
    } catch (error) {
      if (error instanceof SentFileError) throw new ApiError(error.message, 404);
      throw error;
    }
    const { file, data } = loaded;
    const inline = INLINE.has(file.mediaType);
    return context.body(new Uint8Array(data), 200, {
      "content-type":
        inline || !file.mediaType.startsWith("text/")
          ? file.mediaType
          : `${file.mediaType}; charset=utf-8`,
      "content-length": String(data.length),
      "content-disposition": contentDisposition(inline ? "inline" : "attachment", file.name),
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "cache-control": "private, no-cache",
    });
  });
  return routes;
}
