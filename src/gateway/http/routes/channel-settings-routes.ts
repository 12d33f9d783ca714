/**
 * The API's channel settings routes (token needed): name a channel, archive or restore it
 * (`PATCH /api/channels/:id {title?, archived?}`), remove it (`DELETE /api/channels/:id
 * [?force=1]`, see routing/channel-removal.ts). An archived channel is kept whole and still
 * listed by `GET /api/channels` (with `archivedAt`); the page hides it until restored.
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { ChannelRemoval } from "../../routing/channel-removal.js";
import type { GatewayStore } from "../../store/store.js";
import { ApiError, channelParam, readJson } from "./api-request.js";

const MAX_TITLE = 120;

const settingsBody = v.object({
  title: v.optional(
    v.nullable(
      v.pipe(
        v.string("title must be a string or null"),
        v.maxLength(MAX_TITLE, `title must be at most ${MAX_TITLE} characters`),
      ),
    ),
  ),
  archived: v.optional(v.boolean("archived must be true or false")),
});

export function channelSettingsRoutes(store: GatewayStore, removal?: ChannelRemoval): Hono {
  const routes = new Hono();
  routes.delete("/channels/:id", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const force = context.req.query("force");
    if (force !== undefined && !["1", "true", "0", "false"].includes(force)) {
      throw new ApiError("force must be 1 or 0");
    }
    if (removal === undefined) throw new ApiError("this gateway cannot remove channels", 409);
    const outcome = await removal.remove(channelId, force === "1" || force === "true");
    if (!outcome.ok) throw new ApiError(outcome.error, outcome.status);
    const { ok: _, ...removed } = outcome;
    return context.json(removed);
  });
  routes.patch("/channels/:id", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const { title, archived } = await readJson(context.req.raw, settingsBody);
    if (title === undefined && archived === undefined) {
      throw new ApiError("nothing to change: give title or archived", 400);
    }
    const settings = store.channelSettings();
    const found =
      (title === undefined ||
        (await settings.rename(channelId, title?.replace(/\s+/g, " ").trim() || null))) &&
      (archived === undefined || (await settings.archive(channelId, archived)));
    const channel = found ? await store.getChannel(channelId) : null;
    if (channel === null) throw new ApiError(`no channel ${channelId}`, 404);
    return context.json({ channel });
  });
  return routes;
}
