/** The API's schedule routes (token needed): list, add, resume and delete cron schedules. */
import { Hono } from "hono";
import * as v from "valibot";
import { isValidChannelId } from "../../channel-source.js";
import { InvalidScheduleError, type Scheduler } from "../../scheduler/scheduler.js";
import { ApiError, readJson } from "./api-request.js";

/** `channelId` is accepted for `channel`, as schedules are listed with `channelId`. */
const scheduleBody = v.pipe(
  v.unknown(),
  v.transform((raw) =>
    typeof raw === "object" && raw !== null && !("channel" in raw) && "channelId" in raw
      ? { ...raw, channel: (raw as { channelId: unknown }).channelId }
      : raw,
  ),
  v.object({
    cron: v.pipe(v.string(), v.minLength(1, "cron must not be empty")),
    channel: v.pipe(
      v.string(),
      v.check(
        isValidChannelId,
        "channel must match [A-Za-z0-9._:-]{1,128} and not begin with source:",
      ),
    ),
    prompt: v.pipe(v.string(), v.minLength(1, "prompt must not be empty")),
  }),
);

export function scheduleRoutes(scheduler: Scheduler): Hono {
  const routes = new Hono();
  routes.get("/schedules", async (context) => context.json({ schedules: await scheduler.list() }));

  routes.post("/schedules", async (context) => {
    const body = await readJson(context.req.raw, scheduleBody);
    try {
      const schedule = await scheduler.add({
        cron: body.cron,
        channelId: body.channel,
        prompt: body.prompt,
      });
      return context.json({ schedule }, 201);
    } catch (error) {
      if (error instanceof InvalidScheduleError) throw new ApiError(error.message);
      throw error;
    }
  });

  routes.post("/schedules/:id/resume", async (context) => {
    const scheduleId = context.req.param("id");
    const schedule = await scheduler.resume(scheduleId);
    if (!schedule) throw new ApiError(`no schedule with id ${scheduleId}`, 404);
    return context.json({ schedule });
  });

  routes.delete("/schedules/:id", async (context) => {
    const scheduleId = context.req.param("id");
    if (!(await scheduler.remove(scheduleId))) {
      throw new ApiError(`no schedule ${scheduleId}`, 404);
    }
    return context.json({ deleted: scheduleId });
  });
  return routes;
}
