/** The API's routes about the gateway itself (token needed): a fresh link code for the page. */
import { Hono } from "hono";
import type { LinkCodes } from "../link-codes.js";

export function gatewayRoutes(linkCodes: LinkCodes): Hono {
  const routes = new Hono();
  routes.post("/link-codes", (context) => context.json(linkCodes.issue(), 201));
  return routes;
}
