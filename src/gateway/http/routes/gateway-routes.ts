/**
 * The API's routes about the gateway itself (token needed): what its agents are (the folder
 * they work in, the engine, the model, the sandbox: paths, so not in the open health), and a
 * fresh link code for the page.
 */
import { Hono } from "hono";
import type { AgentInfo } from "../../gateway-options.js";
import type { LinkCodes } from "../link-codes.js";

export function gatewayRoutes(linkCodes: LinkCodes, info: AgentInfo): Hono {
  const routes = new Hono();
  routes.get("/info", (context) =>
    context.json({
      cwd: info.cwd,
      engine: info.engine,
      model: info.model,
      sandbox: info.sandbox,
    }),
  );
  routes.post("/link-codes", (context) => context.json(linkCodes.issue(), 201));
  return routes;
}
