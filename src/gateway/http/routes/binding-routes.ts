/**
 * The API's routes about bindings (token needed): every binding with its resolved values and
 * what its agents are, and what a channel's agents are (its binding's, with its `/model`
 * choice) for the page's header.
 */
import { Hono } from "hono";
import type { BindingInfo } from "../../bindings/binding-info.js";
import { channelParam } from "./api-request.js";

export function bindingRoutes(info: BindingInfo): Hono {
  const routes = new Hono();
  routes.get("/bindings", async (context) => {
    const { bindings } = info;
    const listed = await Promise.all(
      bindings.list().map(async (binding) => {
        const agents = await info.forBinding(binding);
        return {
          ...binding,
          model: binding.model ?? null,
          agentModel: agents.model,
          sandbox: agents.sandbox,
        };
      }),
    );
    return context.json({
      bindings: listed,
      budget: bindings.budget ?? null,
      file: bindings.loaded?.file ?? null,
    });
  });
  routes.get("/channels/:id/info", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    return context.json(await info.forChannel(channelId));
  });
  return routes;
}
