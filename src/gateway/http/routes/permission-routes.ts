/**
 * The API's permission routes (token needed): a channel's tool calls waiting for a person,
 * and a person's answer to one ("allow always" also stores a grant for the channel).
 */
import { Hono } from "hono";
import * as v from "valibot";
import { grantCommand } from "../../agents/channel-grant-match.js";
import type { PermissionRequests } from "../../agents/permission-requests.js";
import type { ChannelGrants } from "../../store/source-store.js";
import { ApiError, channelParam, readJson } from "./api-request.js";

const decisionBody = v.object({
  decision: v.picklist(["allow", "deny"], 'decision must be "allow" or "deny"'),
  message: v.optional(
    v.pipe(v.string(), v.maxLength(4000, "message must be at most 4000 characters")),
  ),
  always: v.optional(v.boolean("always must be true or false")),
});

export function permissionRoutes(permissions: PermissionRequests, grants: ChannelGrants): Hono {
  const routes = new Hono();
  routes.get("/channels/:id/permissions", async (context) =>
    context.json({ requests: await permissions.list(channelParam(context.req.param("id"))) }),
  );

  routes.post("/channels/:id/permissions/:requestId", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const requestId = context.req.param("requestId");
    const { decision, message, always } = await readJson(context.req.raw, decisionBody);
    if (always && decision !== "allow") {
      throw new ApiError('always goes only with decision "allow"', 400);
    }
    if (always) {
      // Stored before the answer, so the agent's next such call finds it.
      const waiting = await permissions.list(channelId);
      const request = waiting.find((candidate) => candidate.id === requestId);
      if (request !== undefined) {
        await grants.add({
          channelId,
          toolName: request.toolName,
          command: grantCommand(request.toolName, request.input),
          grantedBy: "the page",
        });
      }
    }
    const outcome = await permissions.decide(channelId, requestId, decision, message);
    if (outcome.status === "owner_gone") {
      throw new ApiError(
        `permission request ${requestId} was asked on worker ${outcome.owner}, which no longer drives ${channelId} (it died or lost the channel); nobody waits for the answer`,
        404,
      );
    }
    if (outcome.status === "unknown") {
      throw new ApiError(`no pending permission request ${requestId} on ${channelId}`, 404);
    }
    if (outcome.status === "already_decided") {
      const done = outcome.decision === "allow" ? "allowed" : "denied";
      throw new ApiError(`permission request ${requestId} was already ${done}`, 409);
    }
    return context.json({ request: outcome.request });
  });
  return routes;
}
