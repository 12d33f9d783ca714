/**
 * The API's pairing routes (token needed): the codes strangers were given by a chat source and
 * the people let in, and the owner's approval of a code (what `rudder pairing` and the page's
 * pairing control call).
 */
import { Hono } from "hono";
import type { GatewayStore } from "../../store/store.js";
import { ApiError } from "./api-request.js";

export function pairingRoutes(store: GatewayStore): Hono {
  const routes = new Hono();
  routes.get("/pairings", async (context) => {
    const source = context.req.query("source");
    return context.json({ pairings: await store.sourceStore().pairings.list(source || undefined) });
  });

  routes.post("/pairings/:source/:code", async (context) => {
    const source = context.req.param("source");
    const code = context.req.param("code");
    if (!/^[a-z]{1,32}$/.test(source) || !/^[A-Za-z0-9]{4,16}$/.test(code)) {
      throw new ApiError("a pairing is approved as /api/pairings/<source>/<CODE>", 400);
    }
    const pairing = await store.sourceStore().pairings.approve(source, code, "the owner");
    if (pairing === null) {
      throw new ApiError(
        `no pairing code ${code} is waiting on ${source} (expired, or approved already)`,
        404,
      );
    }
    return context.json({ pairing });
  });
  return routes;
}
