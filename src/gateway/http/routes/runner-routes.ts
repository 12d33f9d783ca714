/** The API's runner routes (token needed): the live agent processes, and stopping one. */
import { Hono } from "hono";
import type { ProcessPool } from "../../agents/agent-process.js";
import type { PermissionRequests } from "../../agents/permission-requests.js";
import { ApiError, channelParam } from "./api-request.js";

export function runnerRoutes(pool: ProcessPool, permissions: PermissionRequests): Hono {
  const routes = new Hono();
  routes.get("/runners", async (context) =>
    context.json({ runners: pool.listMeasured ? await pool.listMeasured() : pool.list() }),
  );

  routes.delete("/runners/:channel", async (context) => {
    const channelId = channelParam(context.req.param("channel"));
    if (!(await pool.stop(channelId))) {
      throw new ApiError(`no live agent process for channel ${channelId}`, 404);
    }
    permissions.expire(channelId, "the agent process was stopped");
    return context.json({ stopped: channelId });
  });
  return routes;
}
