/**
 * The API's channel settings route (token needed): name a channel, archive or restore it
 * (`PATCH /api/channels/:id {title?, archived?}`). An archived channel is kept whole and still
 * listed by `GET /api/channels` (with `archivedAt`); the page hides it until restored.
 */
import { Hono } from "hono";
import * as v from "valibot";
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

export function channelSettingsRoutes(store: GatewayStore): Hono {
  const routes = new Hono();
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
